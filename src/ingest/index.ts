export { readLines, replayFiles, fileSource, emptyTotals, addBatch, SourceReadError, DEAD_LETTERS_NAMED, type DeadLine, type ReplayTotals, type ReplayOptions } from './ndjson';
export { SlicedApplier, SliceSizer, yieldToLoop, type SlicedOptions } from './sliced-applier';
export { bootstrapFrom, BootstrapAborted, BootstrapError, DEFAULT_BOOTSTRAP_IDLE_MS, DEFAULT_BOOTSTRAP_TIMEOUT_MS, type BootstrapOptions, type Bootstrapped } from './bootstrap';
export { replayInThread, ReplayThreadError, type ReplayJob } from './replay-thread';
