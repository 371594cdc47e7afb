export { readLines, replayFiles, fileSource, emptyTotals, addBatch, type ReplayTotals, type ReplayOptions } from './ndjson';
export { SlicedApplier, SliceSizer, yieldToLoop, type SlicedOptions } from './sliced';
