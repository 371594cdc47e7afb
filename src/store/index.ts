export { openDb, migrate, type Db, type OpenOptions } from './db';
export { Projector, localCommitCount, type SourceEvent, type BatchResult } from './projector';
export { digest } from './digest';
export { domainOf } from './runs';
