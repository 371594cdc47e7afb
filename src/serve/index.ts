// src/serve: the HTTP service over the read models, in rooms by concern. request/ (what a request
// says: parameters, cursors, the key, errors), bodies/ (cache and builders of ready bodies), http/
// (admission and answering), and the surfaces on top: mcp/, feed/ (change feed), docs/ (OpenAPI,
// pages, llms.txt). app.ts wires them into one service (its Koa routes in routes.ts, the node:http
// server in http-server.ts); nothing in the rooms imports these (lint: flow/down).
export { createService, BASE_PATH, type AppOptions, type Service } from './app';
export { createHttpServer } from './http-server';
export { BodyCache, type RouteStats } from './bodies/cache';
export { type Builder, type AccountBuilds } from './bodies/builders';
export { type Served, type ResponseObserver } from './http/served';
