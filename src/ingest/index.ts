export { readLines, replayFiles, fileSource, emptyTotals, addBatch, type ReplayTotals, type ReplayOptions } from './ndjson';
export { SlicedApplier, type SlicedOptions } from './sliced';
