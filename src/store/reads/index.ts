// What the store offers the read models (src/readmodels imports the store only through here, by
// readmodels/store.ts): the ReadStore, the named reads of this folder, and the writer's own
// arithmetic the answers must share (metrics, periods, contributions, the rows the writer encodes).
export { ReadStore } from '../read-store';
export {
  activeSegments, competitorDomainValues, competitorsOf, countedPromptIds, engineNames, knownEngineIds, ownDomainValues, projectName, projectRow,
  promptsOf, promptTexts, segmentPrompts, segmentsOf, termsOf, trackedCompetitorIds, trackedCompetitors, trackedEngines, visibleProjects,
} from './catalog';
export { accountForKeyHash, projectVisible, runGroupProject } from './sight';
export { forumPostRows } from './forum-posts';
export { liveProjectIds, monthsChangedAfter, runMonths, runsCompletedIn, schemaVersionOf, type ExportRunRow } from './export-rows';
export { groupRuns, groupRunsWithEvents, runGroupRow, runGroupRows } from './run-groups';
export { dimsByNumber, dimsMatching, recentRuns, runRowsOfDays, runRowsOfDaysIn } from './run-rows';
export {
  dimsRunCounts, runTallies, sliceHitsOfDays, sliceMentionsOfDays, sliceSumsOfDays, type CountedPairs, type HitTally, type RunTally, type SliceDimension, type SliceGrouping, type SliceHitRow,
  type SliceMentionRow, type SliceSumRow,
} from './slice-tallies';
export {
  hitTotalNumbers, pairTotalNumbers, totalsEngines, type HitTotalNumbers, type PairTotalNumbers,
} from './range-total-rows';
export { dayHitRows, dayPairRows, type DayHitRow, type DayPairRow } from './day-rows';
export { type DayRange, keyNumbers, pairSpan, signalPieces, signalReads, type SignalColumns, type SignalKind, type SignalPiece, type SignalRead } from './signal-rows';
export { MAX_UNCOUNTED_PROMPTS, sliceValueSums, uncountedPrompts, type SliceValueRow, type ValueDimension, type ValueGrouping } from './slice-value-rows';
export { anyStaleTrendDay, engineDayRows, firstRunDay, latestRunDay, pendingPeriods, recountingProject, promptIdsNewestFirst, promptIdsOfDays, rollupLists, trendDayPoints, type RollupList } from './period-rows';

export type { ChangeKind } from '../versions';
export { RR_SCALE, SENTIMENT_SCALE } from '../contributions';
export {
  addSums, averageRank, compareStrings, dayFigures, mentionRate, mentionRateCi, score, sentiment, shareCi, shareOfVoice, sumAll, wilson, zeroSums, Z95, type Interval, type MentionSums,
} from '../metrics';
export { nextMonth, periodEnd, periodStart, type Grain } from '../periods';
export { engineSumsOf, trendPoint, type DayEngineSums, type TrendPoint } from '../trend-days';
export { addMention, citeFacts, citeUrl, mergeCited, storedCitations, storedMentions, zeroMention, type Cited, type UrlCitations } from '../contributions';
export { addCitedTallies, CitedRef, citedEngineRows, citedRefs, citedRows, competitorRows, parseNames, promptRows, type CompetitorRow, type PromptRow, type RollupNames, type CitedTally } from '../rollup-rows';
export { briefFacts, citedDomain, decodeFacts, domainOf, factsKey, type BriefFactFields, type FactsArray, type RunFactFields } from '../run-store';
