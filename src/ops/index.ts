export { createOpsServer, cacheStats, type Readiness, type OpsOptions } from './server';
