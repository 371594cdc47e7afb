export { createOpsServer, cacheStats, type Readiness, type OpsOptions } from './server';
export { accountFigures, Throttled, type AccountFigures, type AccountRow } from './accounts';
export { createMetrics, type Metrics, type IngestFigures } from './prometheus';
export { accessLog, ACCESS_MESSAGE, DEFAULT_HIT_SAMPLE, type AccessLog } from './access-log';
export { isLoopbackHost, opsAccessProblem, bearer, MIN_OPS_TOKEN_LENGTH } from './ops-access';
export { DEFAULT_SNAPSHOT_LIMITS, removeOrphanedSnapshots, type SnapshotLimits } from './snapshot-route';
