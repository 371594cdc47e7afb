export { createService, createHttpServer, BASE_PATH, type AppOptions, type Service } from './app';
export { BodyCache, type RouteStats } from './cache';
export { type Served, type ResponseObserver } from './served';
