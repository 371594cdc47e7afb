export { readLines, replayFiles, fileSource, emptyTotals, addBatch, type ReplayTotals, type ReplayOptions } from './ndjson';
