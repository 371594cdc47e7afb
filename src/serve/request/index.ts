// src/serve/request: what a request says, before anything is answered. Its query and path parameters
// (checked against the parameter schemas, normalized into read-model arguments and the cache key),
// the signed page cursors and their secret, the API key as presented, the base path, and the one
// table of errors every answer uses.
// May import: src/events, src/readmodels, src/store, src/lib. Nothing else in src/serve: every other
// room builds on this one.
export { httpError, HttpError, type ErrorCode } from './errors';
export { parseQuery, queryArgs, requestKey } from './params';
export { BASE_PATH } from './base-path';
