// src/serve/http: answering one request. Admission (readiness, the key and its scopes, the rate
// limit's charge, the failure hook) shared by every transport, the Responder that turns a checked
// request into a body from bodies/, the Koa-free hot path for cache hits, sending bytes with their
// validators, and the per-response observation (request ids, metrics, logs).
// May import: src/serve/request, src/serve/bodies, src/readmodels, src/store, src/lib. Never a surface
// (mcp, feed, docs): they import this room, not the other way round.
export { Access } from './access';
export { Responder } from './responder';
export { RateLimiter } from './ratelimit';
export { type ResponseObserver } from './served';
