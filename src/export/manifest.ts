// manifest.json: what an export directory holds and at which data versions, written last (after every
// file it names), so a reader that trusts it never sees a half-written export. The next export reads it
// to write only what changed since (export.ts).
import fs from 'node:fs';
import path from 'node:path';
import type { ChangeKind } from '../store';
import type { DayRange } from './datasets';

export const MANIFEST_FILE = 'manifest.json';
export const SCHEMA_FILE = 'schema.json';
/** Bumped when the layout or a dataset's columns change: a directory of another format is exported again whole. */
export const EXPORT_FORMAT = 1;

/** What was asked: an export directory belongs to one set of these (a different set needs --full). */
export interface ExportScope {
  projects: string[] | null;
  start_date: string | null;
  end_date: string | null;
}

export interface ManifestProject {
  id: string;
  /** The project's X-Data-Version at the snapshot: what the API's answers carried at that moment. */
  data_version: number;
  /** Its own 'project:<id>' version (migration 017's months are stamped with it) and each kind's. */
  version: number;
  kinds: Record<ChangeKind, number>;
  /** The newest event time applied to it (RFC 3339), null when none. */
  data_as_of: string | null;
}

export interface ManifestPartition {
  project_id: string;
  month: string;
  /** Relative to the export directory, '/'-separated. */
  path: string;
  rows: number;
  bytes: number;
}

export interface ManifestDataset {
  name: string;
  rows: number;
  bytes: number;
  partitions: ManifestPartition[];
}

export interface Manifest {
  format: number;
  exported_at: string;
  /** The database's schema version (PRAGMA user_version) and the metric definitions the figures follow (GET /methodology). */
  schema_version: number;
  metric_definitions_version: string;
  /** Which database was read (a digest of its cursor key; its snapshots and replicas share it): another one's export is not continued incrementally. */
  database_id: string | null;
  scope: ExportScope;
  /** The newest event time applied to any exported project (RFC 3339), null when none. */
  data_as_of: string | null;
  projects: ManifestProject[];
  datasets: ManifestDataset[];
  /** What the run that wrote this manifest did. */
  last_run: { mode: 'full' | 'incremental'; partitions_written: number; partitions_removed: number; rows_written: number; seconds: number };
}

/** The directory's manifest, or null when it has none; a manifest that cannot be read is an error naming the file. */
export function readManifest(dir: string): Manifest | null {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const m = JSON.parse(text) as Manifest;
    if (typeof m.format !== 'number' || !Array.isArray(m.projects) || !Array.isArray(m.datasets)) throw new Error('not an export manifest');
    return m;
  } catch (e) {
    throw new ExportError(`${file} cannot be read (${(e as Error).message}): remove the directory or export with --full`);
  }
}

/** Writes a JSON file whole or not at all: to a temporary name, then renamed over the old one. */
export function writeJsonAtomically(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

export function scopeOf(projects: readonly string[] | null, range: DayRange): ExportScope {
  return { projects: projects === null ? null : [...projects].sort(), start_date: range.start, end_date: range.end };
}

export function sameScope(a: ExportScope, b: ExportScope): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A problem the operator has to fix (the directory, a project, the database): one line, exit 2. */
export class ExportError extends Error {}
