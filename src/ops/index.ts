export { createOpsServer, cacheStats, type Readiness, type OpsOptions } from './server';
export { createMetrics, type Metrics, type IngestFigures } from './prometheus';
export { accessLog, ACCESS_MESSAGE, DEFAULT_HIT_SAMPLE, type AccessLog } from './access-log';
