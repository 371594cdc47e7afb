export { createService, createHttpServer, BASE_PATH, type AppOptions, type Service } from './app';
export { BodyCache, type RouteStats } from './cache';
export { type Builder, type AccountBuilds } from './builders';
export { type Served, type ResponseObserver } from './served';
