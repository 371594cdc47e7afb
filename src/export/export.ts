// `visibility-api export` as a library call: a consistent snapshot of a database written as Parquet
// datasets, Hive-partitioned by project and month, with schema.json and manifest.json. A second export
// into the same directory writes only the partitions whose data changed since its manifest.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { METRIC_DEFINITIONS_VERSION } from '../readmodels/methodology';
import { knownSchemaVersion, openDb, projectVersions, ReadStore, type ProjectVersions } from '../store';
import { countedPromptIds, knownEngineIds, liveProjectIds, monthsChangedAfter, nextMonth, runMonths, schemaVersionOf, trackedCompetitorIds } from '../store/reads';
import { addDays } from '../lib/time';
import type { ColumnValue, DatasetSpec } from './columns';
import { CITATIONS, DAILY_VISIBILITY, DATASETS, FORUM_POSTS, forumTables, MENTIONS, monthRows, RUN_DATASETS, RUNS, type Counting, type DayRange, type Table } from './datasets';
import {
  EXPORT_FORMAT, ExportError, MANIFEST_FILE, readManifest, SCHEMA_FILE, sameScope, scopeOf, writeJsonAtomically,
  type Manifest, type ManifestPartition, type ManifestProject,
} from './manifest';
import { ParquetSink } from './parquet';

export interface ExportOptions {
  db: string;
  out: string;
  /** Only these projects (null: every project not deleted). */
  projects: readonly string[] | null;
  /** UTC days, inclusive; null ends are open. */
  range: DayRange;
  /** Write everything again, whatever the manifest says (also: the only way to change the scope of a directory). */
  full: boolean;
  /** After each partition written or removed. */
  onProgress?: (p: ExportProgress) => void;
  /** Aborted: the export stops after the month in hand (its four run datasets, written together) and leaves the previous manifest (the next run redoes what changed since it). */
  signal?: AbortSignal;
}

export interface ExportProgress {
  rows: number;
  partitionsDone: number;
  partitionsPlanned: number;
}

export interface ExportResult {
  manifest: Manifest | null;
  mode: 'full' | 'incremental';
  partitionsWritten: number;
  partitionsRemoved: number;
  rowsWritten: number;
  bytesWritten: number;
  seconds: number;
  /** True when the signal stopped it: nothing of this run is in a manifest. */
  stopped: boolean;
}

/** One project's work: the months whose run datasets are written again, and whether its forum posts are. */
interface ProjectPlan {
  id: string;
  versions: ProjectVersions;
  /** Every partition of the project is written again (first export, its setup or engines moved, --full). */
  whole: boolean;
  months: string[];
  forum: boolean;
}

const hivePart = (key: string, value: string): string => `${key}=${encodeURIComponent(value)}`;
const partitionDir = (dataset: string, projectId: string, month: string): string => path.posix.join(dataset, hivePart('project_id', projectId), hivePart('month', month));
const PART_FILE = 'part-0.parquet';

/** The instant range the day range covers, for reading runs' months. */
function instants(range: DayRange): [string, string] {
  return [range.start === null ? '0000' : `${range.start}T00:00:00.000Z`, range.end === null ? '9999' : `${addDays(range.end, 1)}T00:00:00.000Z`];
}

const monthInRange = (month: string, range: DayRange): boolean =>
  (range.start === null || nextMonth(`${month}-01`) > range.start) && (range.end === null || `${month}-01` <= range.end);

/** The project's partitions on disk for one dataset, by month (the directory is the truth: an interrupted run may have left some the manifest does not name). */
function monthsOnDisk(out: string, dataset: string, projectId: string): string[] {
  const dir = path.join(out, dataset, hivePart('project_id', projectId));
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((d) => d.startsWith('month=')).map((d) => decodeURIComponent(d.slice('month='.length)));
}

/** Project ids with a folder under a dataset on disk. */
function projectsOnDisk(out: string, dataset: string): string[] {
  const dir = path.join(out, dataset);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((d) => d.startsWith('project_id=')).map((d) => decodeURIComponent(d.slice('project_id='.length)));
}

/**
 * Refuses a directory that is neither absent, empty, nor an export's (the export removes partitions it
 * did not write). An export's holds schema.json, written before any partition, so a run stopped
 * before its first manifest is still known as one.
 */
function checkOut(out: string): void {
  if (!fs.existsSync(out)) return;
  if (!fs.statSync(out).isDirectory()) throw new ExportError(`${out} is not a directory`);
  const entries = fs.readdirSync(out);
  if (entries.length > 0 && !entries.includes(MANIFEST_FILE) && !entries.includes(SCHEMA_FILE)) {
    throw new ExportError(`${out} is not empty and holds no ${MANIFEST_FILE}: give an empty or new directory (an export removes partitions it did not write)`);
  }
}

function openStore(file: string): ReadStore {
  // Read-only: a missing, empty, foreign, newer or damaged file is a DbOpenError naming it.
  const db = openDb(file, { readonly: true });
  const store = new ReadStore(db);
  const schema = schemaVersionOf(store);
  if (schema !== knownSchemaVersion()) {
    store.close();
    throw new ExportError(`${file} has schema ${schema}, this build exports schema ${knownSchemaVersion()}: start \`serve\` or run \`replay\` on it once to migrate it`);
  }
  return store;
}

export async function exportData(o: ExportOptions): Promise<ExportResult> {
  const started = Date.now();
  const out = path.resolve(o.out);
  checkOut(out);
  const previous = o.full ? null : readManifest(out);
  const scope = scopeOf(o.projects, o.range);
  if (previous && !sameScope(previous.scope, scope)) {
    throw new ExportError(`${out} holds an export of ${JSON.stringify(previous.scope)}, not ${JSON.stringify(scope)}: export into another directory, or pass --full to replace it`);
  }
  const store = openStore(o.db);
  const release = store.hold();
  try {
    const database = databaseId(store);
    // The versions a manifest records mean something only in the database that wrote them (a file
    // replayed again from the log numbers its versions afresh), and only in this layout.
    const incremental = previous !== null && previous.format === EXPORT_FORMAT && previous.schema_version === knownSchemaVersion() && previous.database_id === database;
    const live = new Set(liveProjectIds(store));
    if (o.projects) {
      // A project named that the database never had is a typo, not an empty export.
      const known = new Set([...live, ...(previous?.projects.map((p) => p.id) ?? [])]);
      const unknown = o.projects.filter((id) => !known.has(id) && !projectExists(store, id));
      if (unknown.length > 0) throw new ExportError(`no project ${unknown.join(', ')} in ${o.db}`);
    }
    const ids = (o.projects ?? [...live]).filter((id) => live.has(id)).sort();
    const before = new Map((incremental ? previous.projects : []).map((p) => [p.id, p]));
    const [from, to] = instants(o.range);
    const plans = ids.map((id) => planProject(store, id, before.get(id) ?? null, o.range, from, to));
    const engines = new Set(knownEngineIds(store));
    fs.mkdirSync(out, { recursive: true });
    writeJsonAtomically(path.join(out, SCHEMA_FILE), schemaDocument());

    const kept = incremental ? keptPartitions(previous, new Set(ids), plans) : new Map<string, ManifestPartition[]>();
    const written = new Map<string, ManifestPartition[]>(DATASETS.map((d) => [d.name, []]));
    let removed = 0;
    let rowsWritten = 0;
    let bytesWritten = 0;
    let done = 0;
    // Forum posts count as one partition here: how many months they span is known only once read.
    const planned = plans.reduce((n, p) => n + p.months.length * RUN_DATASETS.length + (p.forum ? 1 : 0), 0);
    const progress = (): void => o.onProgress?.({ rows: rowsWritten, partitionsDone: done, partitionsPlanned: planned });
    const stopped = (): boolean => o.signal?.aborted === true;

    /** A partition written as its rows come: its file is opened at the first row, under a temporary name renamed into place once whole. */
    class Partition {
      private sink: ParquetSink | null = null;
      private readonly rel: string;
      constructor(readonly spec: DatasetSpec, readonly projectId: string, readonly month: string) {
        this.rel = partitionDir(spec.name, projectId, month);
      }
      get rows(): number { return this.sink?.rows ?? 0; }
      add(values: readonly ColumnValue[]): void {
        if (this.sink === null) {
          const dir = path.join(out, this.rel);
          fs.mkdirSync(dir, { recursive: true });
          // A dot file while written: readers of Hive layouts (pyarrow, Spark, DuckDB's globs) pass over it if a kill leaves it.
          this.sink = new ParquetSink(path.join(dir, `.${PART_FILE}.tmp`), this.spec);
        }
        this.sink.add(values);
      }
      /** The file renamed into place and recorded, or the partition removed when it got no rows. */
      finish(): void {
        if (this.sink === null) {
          drop(this.spec.name, this.projectId, this.month);
          return;
        }
        const bytes = this.sink.finish();
        fs.renameSync(this.sink.file, path.join(out, this.rel, PART_FILE));
        written.get(this.spec.name)!.push({ project_id: this.projectId, month: this.month, path: `${this.rel}/${PART_FILE}`, rows: this.sink.rows, bytes });
        rowsWritten += this.sink.rows;
        bytesWritten += bytes;
        done += 1;
        progress();
      }
      abort(): void { this.sink?.abort(); }
    }
    const put = (table: Table, projectId: string, month: string): void => {
      const p = new Partition(table.spec, projectId, month);
      for (let r = 0; r < table.rows; r++) p.add(table.columns.map((c) => c[r]!));
      p.finish();
    };
    const drop = (dataset: string, projectId: string, month: string): void => {
      const dir = path.join(out, partitionDir(dataset, projectId, month));
      if (!fs.existsSync(dir)) return;
      fs.rmSync(dir, { recursive: true, force: true });
      removed += 1;
    };

    for (const plan of plans) {
      if (stopped()) break;
      const counting: Counting = { prompts: new Set(countedPromptIds(store, plan.id)), engines, competitors: new Set(trackedCompetitorIds(store, plan.id)) };
      const runMonthsWritten = new Set<string>();
      for (const month of plan.months) {
        if (stopped()) break;
        const parts = { runs: new Partition(RUNS, plan.id, month), mentions: new Partition(MENTIONS, plan.id, month), citations: new Partition(CITATIONS, plan.id, month), daily: new Partition(DAILY_VISIBILITY, plan.id, month) };
        try {
          monthRows(store, plan.id, month, o.range, counting, parts);
        } catch (e) {
          for (const p of Object.values(parts)) p.abort();
          throw e;
        }
        for (const p of Object.values(parts)) p.finish();
        runMonthsWritten.add(month);
        // Let signals and the progress line through between months.
        await new Promise((r) => setImmediate(r));
      }
      const forumMonths = new Set<string>();
      if (plan.forum && !stopped()) {
        for (const [month, table] of forumTables(store, plan.id, o.range)) {
          put(table, plan.id, month);
          forumMonths.add(month);
        }
        for (const month of monthsOnDisk(out, FORUM_POSTS.name, plan.id)) if (!forumMonths.has(month)) drop(FORUM_POSTS.name, plan.id, month);
      }
      if (plan.whole && !stopped()) {
        // Months that had rows and have none now (runs moved away, the range narrowed): gone.
        for (const d of RUN_DATASETS) for (const month of monthsOnDisk(out, d.name, plan.id)) if (!runMonthsWritten.has(month)) drop(d.name, plan.id, month);
      }
    }
    if (!stopped()) {
      // Projects no longer exported (deleted, or outside --project): their folders go.
      const exported = new Set(ids);
      for (const d of DATASETS) {
        for (const id of projectsOnDisk(out, d.name)) {
          if (!exported.has(id)) {
            fs.rmSync(path.join(out, d.name, hivePart('project_id', id)), { recursive: true, force: true });
            removed += 1;
          }
        }
      }
    }
    const result: ExportResult = {
      manifest: null, mode: incremental ? 'incremental' : 'full', partitionsWritten: done, partitionsRemoved: removed,
      rowsWritten, bytesWritten, seconds: (Date.now() - started) / 1000, stopped: stopped(),
    };
    if (result.stopped) return result;
    const manifest: Manifest = {
      format: EXPORT_FORMAT,
      exported_at: new Date().toISOString(),
      schema_version: knownSchemaVersion(),
      database_id: database,
      metric_definitions_version: METRIC_DEFINITIONS_VERSION,
      scope,
      data_as_of: plans.reduce<string | null>((m, p) => (p.versions.data_as_of !== null && (m === null || p.versions.data_as_of > m) ? p.versions.data_as_of : m), null),
      projects: plans.map((p) => manifestProject(p.id, p.versions)),
      datasets: DATASETS.map((d) => datasetEntry(d, [...(kept.get(d.name) ?? []), ...written.get(d.name)!])),
      last_run: { mode: result.mode, partitions_written: done, partitions_removed: removed, rows_written: rowsWritten, seconds: result.seconds },
    };
    writeJsonAtomically(path.join(out, MANIFEST_FILE), manifest);
    result.manifest = manifest;
    return result;
  } finally {
    release();
    store.close();
  }
}

/**
 * Which database the export read, without saying anything of it: a digest of its cursor key (migration
 * 014), random per database file and kept by its snapshots and replicas, which continue its versions.
 */
function databaseId(store: ReadStore): string | null {
  const secret = store.cursorSecret();
  return secret === null ? null : createHash('sha256').update('visibility-api export\0').update(secret).digest('hex').slice(0, 16);
}

/** Whether the database ever applied an event of the project (its own version, the shared engines' aside). */
function projectExists(store: ReadStore, id: string): boolean {
  const v = projectVersions(store, id);
  return v.version - v.kinds.engines > 0;
}

/** What to write of one project, from its versions now and those the manifest recorded. */
function planProject(store: ReadStore, id: string, before: ManifestProject | null, range: DayRange, from: string, to: string): ProjectPlan {
  const versions = projectVersions(store, id);
  const all = (): ProjectPlan => ({ id, versions, whole: true, months: runMonths(store, id, from, to), forum: true });
  if (before === null || versions.version - versions.kinds.engines < before.version) return all();
  const k = versions.kinds;
  // What decides which runs count (prompts, competitors, engines) or whether the project is there moved: every month may read differently.
  if (k.setup !== before.kinds.setup || k.project !== before.kinds.project || k.engines !== before.kinds.engines) return all();
  const months = k.runs === before.kinds.runs ? [] : monthsChangedAfter(store, id, before.version).filter((m) => monthInRange(m, range));
  return { id, versions, whole: false, months, forum: k.forum !== before.kinds.forum };
}

/** The previous manifest's partitions this run leaves as they are. */
function keptPartitions(previous: Manifest, exported: ReadonlySet<string>, plans: readonly ProjectPlan[]): Map<string, ManifestPartition[]> {
  const byId = new Map(plans.map((p) => [p.id, p]));
  const kept = new Map<string, ManifestPartition[]>();
  for (const d of previous.datasets) {
    kept.set(d.name, d.partitions.filter((part) => {
      if (!exported.has(part.project_id)) return false;
      const plan = byId.get(part.project_id)!;
      if (plan.whole) return false;
      if (d.name === FORUM_POSTS.name) return !plan.forum;
      return !plan.months.includes(part.month);
    }));
  }
  return kept;
}

function manifestProject(id: string, v: ProjectVersions): ManifestProject {
  return { id, data_version: v.version, version: v.version - v.kinds.engines, kinds: { ...v.kinds }, data_as_of: v.data_as_of };
}

function datasetEntry(d: DatasetSpec, partitions: ManifestPartition[]) {
  partitions.sort((a, b) => (a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
  return {
    name: d.name,
    rows: partitions.reduce((n, p) => n + p.rows, 0),
    bytes: partitions.reduce((n, p) => n + p.bytes, 0),
    partitions,
  };
}

/** schema.json: every dataset's columns with their Parquet types, and the layout. */
export function schemaDocument(): unknown {
  return {
    format: EXPORT_FORMAT,
    layout: '<dataset>/project_id=<project id>/month=<YYYY-MM>/part-0.parquet (Hive partitioning: project_id and month are in the path, not in the files)',
    datasets: DATASETS.map((d) => ({ name: d.name, description: d.description, partitioned_by: ['project_id', 'month'], columns: d.columns })),
  };
}
