// src/serve/bodies: the bytes of an answer. The LRU of ready bodies (cache.ts), the builders that make
// a body on a miss (inline, or on build threads fed by a fair queue per account), one build
// (ready-body.ts: read model -> validated JSON -> gzip), and the bodies' generated validators.
// May import: src/serve/request (errors, cursors), src/readmodels, src/store, src/events, src/lib.
// Never a surface (mcp, feed, docs) nor http/: a body does not know who asked for it.
export { BodyCache } from './cache';
export { encodeBody, type Ready } from './encode';
export { InlineBuilder, ThreadBuilder, type Builder } from './builders';
export { BodySchemas } from './bodies';
