// The five exported datasets: each one's columns (the single source of the Parquet schemas, schema.json
// and docs/export.md's tables) and the rows of one project and month, read from a held snapshot.
import { uuidFrom } from '../lib/ids';
import { addDays } from '../lib/time';
import type { PromptRunCompleted } from '../events';
import {
  addMention, compareStrings, dayFigures, decodeFacts, forumPostRows, periodEnd, runsCompletedIn, storedCitations, storedMentions, zeroMention, type ReadStore,
  type RunFactFields,
} from '../store/reads';
import type { ColumnSpec, ColumnType, ColumnValue, DatasetSpec } from './columns';

const col = (name: string, type: ColumnType, nullable: boolean, description: string): ColumnSpec => ({ name, type, nullable, description });

const COUNTED = col('counted', 'boolean', false,
  'Whether the API counts the run (docs/metrics.md, "Which runs count"): succeeded, its prompt is the project\'s and not deleted, its engine is known. Reports are over counted runs only.');

export const RUNS: DatasetSpec = {
  name: 'runs',
  description: 'Every stored prompt run (succeeded and failed), one row each, by the month it completed in (UTC).',
  columns: [
    col('run_id', 'string', false, 'The prompt run id.'),
    col('run_group_id', 'string', false, 'The run group it ran in.'),
    col('prompt_id', 'string', false, 'The prompt asked.'),
    col('engine_id', 'string', false, 'The AI engine answering.'),
    col('status', 'string', false, 'succeeded | failed.'),
    col('completed_at', 'timestamp', false, 'When the run completed (UTC).'),
    col('day', 'date', false, 'The UTC day of completed_at: the day the reports count it on.'),
    col('brand_mentioned', 'boolean', false, 'Whether the answer mentions the brand.'),
    col('brand_position', 'int32', true, 'The brand\'s best (lowest) position in the answer; null when not mentioned.'),
    col('brand_sentiment', 'double', true, 'The sentiment of that mention, -1..1; null when none was given.'),
    col('mention_count', 'int32', false, 'Mentions in the answer (brand and competitors).'),
    col('citation_count', 'int32', false, 'Citations in the answer.'),
    col('competitors_mentioned', 'int32', false, 'Distinct competitors the answer mentions.'),
    col('country', 'string', true, 'ISO 3166-1 alpha-2 country the prompt was asked from; null when the run names none.'),
    col('persona', 'string', true, 'The persona label the prompt was asked as; null when none.'),
    col('model', 'string', true, 'The model that answered; null when none.'),
    col('surface', 'string', true, 'api | app; null when none.'),
    COUNTED,
  ],
};

export const MENTIONS: DatasetSpec = {
  name: 'mentions',
  description: 'Brand and competitor mentions of succeeded runs, as GET /projects/{id}/mentions lists them (ids included), by the month the run completed in.',
  columns: [
    col('mention_id', 'string', false, 'The id the API gives the mention.'),
    col('run_id', 'string', false, 'The prompt run whose answer holds it.'),
    col('run_group_id', 'string', false, 'The run\'s group.'),
    col('prompt_id', 'string', false, 'The run\'s prompt.'),
    col('engine_id', 'string', false, 'The run\'s engine.'),
    col('entity_type', 'string', false, 'brand | competitor.'),
    col('competitor_id', 'string', true, 'The competitor mentioned; null for the brand.'),
    col('name', 'string', false, 'The name as the answer gave it.'),
    col('position', 'int32', false, 'Its position in the answer (1 is first).'),
    col('sentiment', 'double', true, 'Sentiment, -1..1; null when none was given.'),
    col('snippet', 'string', true, 'The text around the mention; null when none was given.'),
    col('observed_at', 'timestamp', false, 'When the run completed (UTC).'),
    col('day', 'date', false, 'The UTC day of observed_at.'),
    COUNTED,
  ],
};

export const CITATIONS: DatasetSpec = {
  name: 'citations',
  description: 'Citations of succeeded runs, one row per citation in the answer\'s order, by the month the run completed in.',
  columns: [
    col('run_id', 'string', false, 'The prompt run whose answer cites it.'),
    col('run_group_id', 'string', false, 'The run\'s group.'),
    col('prompt_id', 'string', false, 'The run\'s prompt.'),
    col('engine_id', 'string', false, 'The run\'s engine.'),
    col('url', 'string', false, 'The cited URL.'),
    col('domain', 'string', false, 'Its host, lower case, without "www.".'),
    col('title', 'string', true, 'The title the answer gave; null when none.'),
    col('position', 'int32', true, 'Its position among the answer\'s citations; null when none was given.'),
    col('cited_at', 'timestamp', false, 'When the run completed (UTC).'),
    col('day', 'date', false, 'The UTC day of cited_at.'),
    COUNTED,
  ],
};

export const DAILY_VISIBILITY: DatasetSpec = {
  name: 'daily_visibility',
  description: 'The brand\'s figures per day and engine over counted runs (the sums the trend and daily scores are made of, from the same runs with the same arithmetic), by month.',
  columns: [
    col('day', 'date', false, 'The UTC day.'),
    col('engine_id', 'string', false, 'The engine.'),
    col('run_count', 'int32', false, 'Counted runs that day on that engine.'),
    col('mentioned_count', 'int32', false, 'Of them, runs whose answer mentions the brand: sum it with run_count to get a range\'s mention rate.'),
    col('competitor_mention_count', 'int32', false, 'Runs mentioning a tracked competitor, counted once per competitor (share of voice\'s denominator, less the brand).'),
    col('score', 'double', false, 'Visibility score: 100 x mean over runs of 1/position (0 when not mentioned).'),
    col('mention_rate', 'double', false, 'mentioned_count / run_count.'),
    col('average_rank', 'double', true, 'Mean best position over the runs that mention the brand; null when none do.'),
    col('sentiment', 'double', true, 'Mean sentiment of the brand\'s mentions that carry one; null when none do.'),
    col('share_of_voice', 'double', true, 'mentioned_count / (mentioned_count + competitor_mention_count); null when both are 0.'),
  ],
};

export const FORUM_POSTS: DatasetSpec = {
  name: 'forum_posts',
  description: 'Forum posts found for the project with their latest fields, by the month they were discovered in (UTC).',
  columns: [
    col('post_id', 'string', false, 'The forum post id.'),
    col('platform', 'string', false, 'Where it was posted (reddit, ...).'),
    col('url', 'string', false, 'The post\'s URL.'),
    col('title', 'string', false, 'Its title.'),
    col('community', 'string', true, 'The community (subreddit, forum section); null when none.'),
    col('author', 'string', true, 'Its author; null when unknown.'),
    col('posted_at', 'timestamp', true, 'When it was posted (UTC); null when unknown.'),
    col('discovered_at', 'timestamp', false, 'When it was found (UTC).'),
    col('matched_terms', 'string', false, 'The tracked terms it matched, as a JSON array of strings.'),
    col('status', 'string', false, 'Its workflow status (open when never set).'),
    col('relevance', 'double', false, 'Relevance, 0..1.'),
    col('intent', 'string', false, 'The intent found in it.'),
    col('comment_count', 'int64', true, 'Comments on it; null when unknown.'),
    col('score', 'int64', true, 'Its score on the platform; null when unknown.'),
  ],
};

/** Every dataset, in the order an export writes them and the manifest lists them. */
export const DATASETS: readonly DatasetSpec[] = [RUNS, MENTIONS, CITATIONS, DAILY_VISIBILITY, FORUM_POSTS];

/** The datasets made from the runs of a month (rewritten together when the month's runs changed). */
export const RUN_DATASETS: readonly DatasetSpec[] = [RUNS, MENTIONS, CITATIONS, DAILY_VISIBILITY];

/** A dataset's rows of one partition, column by column (the sink's input). */
export class Table {
  readonly columns: ColumnValue[][];
  rows = 0;

  constructor(readonly spec: DatasetSpec) {
    this.columns = spec.columns.map(() => []);
  }

  /** One row, its values in the spec's column order. */
  add(values: readonly ColumnValue[]): void {
    for (let i = 0; i < values.length; i++) this.columns[i]!.push(values[i]!);
    this.rows += 1;
  }
}

/** The counting rule's sets of one project, read once per export (docs/metrics.md "Which runs count"), and its tracked competitors. */
export interface Counting {
  prompts: ReadonlySet<string>;
  engines: ReadonlySet<string>;
  competitors: ReadonlySet<string>;
}

/** Days asked (inclusive, either end open: null). */
export interface DayRange {
  start: string | null;
  end: string | null;
}

/** A month's first and last day, narrowed to the range. */
function daysOf(month: string, range: DayRange): [string, string] {
  const first = `${month}-01`;
  const last = periodEnd(`${month}-01`, 'month');
  return [range.start !== null && range.start > first ? range.start : first, range.end !== null && range.end < last ? range.end : last];
}

/** One day and engine's sums of counted runs, as agg_engine_day keeps them. */
interface DayEngine { day: string; engineId: string; runs: number; brand: ReturnType<typeof zeroMention>; competitorRuns: number }

function addToDay(days: Map<string, DayEngine>, day: string, f: RunFactFields, counting: Counting): void {
  const key = `${day} ${f.engineId}`;
  let d = days.get(key);
  if (d === undefined) days.set(key, (d = { day, engineId: f.engineId, runs: 0, brand: zeroMention(), competitorRuns: 0 }));
  d.runs += 1;
  if (f.brandPosition !== null) addMention(d.brand, f.brandPosition, f.brandSentiment, 1);
  for (const hit of f.hits) if (counting.competitors.has(hit[0])) d.competitorRuns += 1;
}

/** Where a dataset's rows go, one at a time: a Table, or the export's Parquet sink of a partition. */
export interface RowSink { add(values: readonly ColumnValue[]): void }

/** The run datasets' sinks of one month. */
export interface MonthSinks { runs: RowSink; mentions: RowSink; citations: RowSink; daily: RowSink }

/**
 * The four run datasets of one project's month (within the range), row by row into `sinks`: the runs
 * are read a page at a time, so what is held is a page of runs and the day and engine sums, whatever
 * the month holds. Rows come in the order the files keep: runs by completion time then id.
 */
export function monthRows(store: ReadStore, projectId: string, month: string, range: DayRange, counting: Counting, sinks: MonthSinks): void {
  const { runs, mentions, citations } = sinks;
  const [first, last] = daysOf(month, range);
  // daily_visibility from the same runs, with the writer's arithmetic for its engine-day rows (contributions.ts), so the rows are
  // never read while the writer may be counting them again (migration 018).
  const days = new Map<string, DayEngine>();
  for (const page of runsCompletedIn(store, projectId, `${first}T00:00:00.000Z`, `${addDays(last, 1)}T00:00:00.000Z`)) {
    for (const [id, group, status, completedAt, factsText, eventText, country, persona, model, surface] of page) {
      const f = decodeFacts(factsText);
      const day = completedAt.slice(0, 10);
      const counted = status === 'succeeded' && counting.prompts.has(f.promptId) && counting.engines.has(f.engineId);
      runs.add([id, group, f.promptId, f.engineId, status, completedAt, day, f.brandPosition !== null, f.brandPosition, f.brandSentiment, f.mentionCount, f.citationCount, f.hits.length, country, persona, model, surface, counted]);
      if (status !== 'succeeded') continue;
      if (counted) addToDay(days, day, f, counting);
      const run = (JSON.parse(eventText) as { data: PromptRunCompleted }).data;
      storedMentions(run.mentions).forEach((m, idx) => {
        mentions.add([uuidFrom(`${id}/mention/${idx}`), id, group, f.promptId, f.engineId, m.entity_type, m.competitor_id, m.name, m.position, m.sentiment, m.snippet, completedAt, day, counted]);
      });
      for (const c of storedCitations(run.citations)) {
        citations.add([id, group, f.promptId, f.engineId, c.url, c.domain, c.title, c.position, completedAt, day, counted]);
      }
    }
  }
  for (const key of [...days.keys()].sort(compareStrings)) {
    const d = days.get(key)!;
    const sums = { runs: d.runs, mentioned: d.brand.runs, position_sum: d.brand.position_sum, rr_fixed: d.brand.rr_fixed, sentiment_fixed: d.brand.sentiment_fixed, sentiment_n: d.brand.sentiment_n };
    const f = dayFigures(sums, d.competitorRuns);
    sinks.daily.add([d.day, d.engineId, d.runs, d.brand.runs, d.competitorRuns, f.score, f.mention_rate, f.average_rank, f.sentiment, f.share_of_voice]);
  }
}

/** The four run datasets of one project's month (within the range), held whole: for benches and tests; the export streams them (monthRows). */
export function monthTables(store: ReadStore, projectId: string, month: string, range: DayRange, counting: Counting): Table[] {
  const tables = { runs: new Table(RUNS), mentions: new Table(MENTIONS), citations: new Table(CITATIONS), daily: new Table(DAILY_VISIBILITY) };
  monthRows(store, projectId, month, range, counting, tables);
  return [tables.runs, tables.mentions, tables.citations, tables.daily];
}

interface ForumRow {
  id: string; platform: string; url: string; title: string; community: string | null; author: string | null;
  posted_at: string | null; discovered_at: string; matched_terms: string; status: string; relevance: number;
  intent: string; comment_count: number | null; score: number | null;
}

const UTC_MILLIS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** An RFC 3339 time as the sink's timestamps are: UTC, milliseconds (forum times are stored as their events gave them). */
function utc(time: string): string {
  return UTC_MILLIS.test(time) ? time : new Date(time).toISOString();
}

/** The project's forum posts discovered within the range (UTC days), one table per month of discovered_at. */
export function forumTables(store: ReadStore, projectId: string, range: DayRange): Map<string, Table> {
  const byMonth = new Map<string, Table>();
  // Newest first, as the API lists them; each month's file keeps that order.
  const rows = forumPostRows<ForumRow>(store, projectId, null, -1);
  for (const r of rows) {
    const discoveredAt = utc(r.discovered_at);
    const day = discoveredAt.slice(0, 10);
    if ((range.start !== null && day < range.start) || (range.end !== null && day > range.end)) continue;
    const month = day.slice(0, 7);
    let t = byMonth.get(month);
    if (!t) byMonth.set(month, (t = new Table(FORUM_POSTS)));
    t.add([r.id, r.platform, r.url, r.title, r.community, r.author, r.posted_at === null ? null : utc(r.posted_at), discoveredAt, r.matched_terms, r.status, r.relevance, r.intent, r.comment_count, r.score]);
  }
  return byMonth;
}
