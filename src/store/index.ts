export { openDb, migrate, verifyDb, isCorruption, isStorageError, knownSchemaVersion, DbOpenError, type Db, type OpenOptions } from './db';
export { Projector, type SourceEvent, type BatchResult } from './projector';
export { adoptCommitCounter, commitCounter, localCommitCount } from './commits';
export { digest } from './digest';
export { domainOf } from './runs';
export { SourcePositions } from './positions';
export { DeadLetterOutbox, type PendingDeadLetter } from './dead-letters';
export { openReader, commitProbe, checkpoint, SqliteError } from './connections';
export { hasReadModel } from './read-model';
