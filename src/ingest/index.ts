export { readLines, replayFiles, fileSource, emptyTotals, addBatch, SourceReadError, type ReplayTotals, type ReplayOptions } from './ndjson';
export { SlicedApplier, SliceSizer, yieldToLoop, type SlicedOptions } from './sliced';
export { bootstrapFrom, BootstrapError, type Bootstrapped } from './bootstrap';
export { replayInThread, ReplayThreadError, type ReplayJob } from './replay-thread';
