export { createOpsServer, cacheStats, type Readiness, type OpsOptions } from './server';
export { createMetrics, type Metrics, type IngestFigures } from './prometheus';
