// The export's Parquet sink: one dataset's columns -> one Parquet file. hyparquet-writer (pure JS,
// no native code or WebAssembly) was chosen on measurements: docs/decisions.md, "Parquet writer".
// Output is a function of the input alone: the same columns give the same bytes (a fixed
// created_by, no timestamps, pages compressed by node:zlib, whose gzip header carries no time).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import type { ColumnSpec, DatasetSpec } from './columns';

/** GZIP: 35-40% smaller than SNAPPY and no slower (node:zlib is native; the package's SNAPPY is JS). */
export type Codec = 'GZIP' | 'SNAPPY';
export const DEFAULT_CODEC: Codec = 'GZIP';

/** Written into every file's footer (Parquet's created_by): constant, so output stays byte-stable. */
const CREATED_BY = 'visibility-api export';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 86_400_000;

type HyparquetWriter = typeof import('hyparquet-writer', { with: { 'resolution-mode': 'import' } });
let writer: HyparquetWriter | undefined;

/**
 * hyparquet-writer is an ES module; this build is CommonJS. Node >= 20.19 (package.json engines)
 * require()s ES modules natively, and require() resolves with Node's own resolver, which the test
 * runner's TypeScript loader (whose import() resolver lacks "./src/*.js" export patterns) leaves alone.
 */
const hyparquetWriter = (): HyparquetWriter => (writer ??= createRequire(__filename)('hyparquet-writer') as HyparquetWriter);

/** The Parquet schema element of a column: physical type, logical type, REQUIRED unless nullable. */
function element(c: ColumnSpec) {
  const base = { name: c.name, repetition_type: c.nullable ? 'OPTIONAL' as const : 'REQUIRED' as const };
  switch (c.type) {
    case 'string': return { ...base, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, logical_type: { type: 'STRING' as const } };
    case 'int32': return { ...base, type: 'INT32' as const };
    case 'int64': return { ...base, type: 'INT64' as const };
    case 'double': return { ...base, type: 'DOUBLE' as const };
    case 'boolean': return { ...base, type: 'BOOLEAN' as const };
    case 'date': return { ...base, type: 'INT32' as const, converted_type: 'DATE' as const, logical_type: { type: 'DATE' as const } };
    case 'timestamp': return {
      ...base, type: 'INT64' as const, converted_type: 'TIMESTAMP_MILLIS' as const,
      logical_type: { type: 'TIMESTAMP' as const, isAdjustedToUTC: true, unit: 'MILLIS' as const },
    };
  }
}

/** A column's values as the writer takes them (dates in days, timestamps and int64 as bigint), checked. */
function encode(c: ColumnSpec, values: unknown[]): unknown[] {
  const bad = (v: unknown): Error => new Error(`export column ${c.name} (${c.type}${c.nullable ? ', nullable' : ''}): bad value ${JSON.stringify(v)}`);
  const map = (ok: (v: unknown) => boolean, f: (v: never) => unknown): unknown[] => values.map((v) => {
    if (v === null) { if (c.nullable) return null; throw bad(v); }
    if (!ok(v)) throw bad(v);
    return f(v as never);
  });
  const int = (min: number, max: number) => (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
  switch (c.type) {
    case 'string': return map((v) => typeof v === 'string', (v: string) => v);
    case 'int32': return map(int(-(2 ** 31), 2 ** 31 - 1), (v: number) => v);
    case 'int64': return map(int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER), (v: number) => BigInt(v));
    case 'double': return map((v) => typeof v === 'number', (v: number) => v);
    case 'boolean': return map((v) => typeof v === 'boolean', (v: boolean) => v);
    case 'date': return map((v) => typeof v === 'string' && DATE.test(v) && !Number.isNaN(Date.parse(v)), (v: string) => Date.parse(v) / DAY_MS);
    case 'timestamp': return map((v) => typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)), (v: string) => BigInt(Date.parse(v)));
  }
}

/**
 * Rows per row group. A partition is written a row group at a time, so an export holds at most this many
 * rows of each dataset whatever a project's month holds (a month of a 1,000-prompt, 8-engine project's
 * citations is most of a million rows). Fixed, so the same rows give the same bytes however they were
 * read; a partition of fewer rows is one row group, as every file was before. 10,000 rather than more:
 * peak RSS of a large export grows with it (500 prompts x 7 engines x 60 days: 231 MB at 10,000, 464 MB
 * at 50,000), for files 7% smaller at 50,000.
 */
export const ROW_GROUP_ROWS = 10_000;

/** The package's in-memory writer, given a flush that hands its bytes to a file descriptor after every row group. */
interface ByteWriterLike { buffer: ArrayBuffer; index: number; offset: number; flush?(): void; finish(): void }

/**
 * One Parquet file written as its rows arrive: rows are kept column by column until a row group is
 * full, then encoded, compressed and appended to the file; finish() writes the last group and the
 * footer. The caller writes to a temporary name and renames.
 */
export class ParquetSink {
  private readonly fd: number;
  private readonly buffered: unknown[][];
  private readonly pq: InstanceType<HyparquetWriter['ParquetWriter']>;
  private pending = 0;
  private closed = false;
  rows = 0;

  constructor(readonly file: string, readonly spec: DatasetSpec, codec: Codec = DEFAULT_CODEC, private readonly groupRows = ROW_GROUP_ROWS) {
    const { ByteWriter, ParquetWriter } = hyparquetWriter();
    this.fd = fs.openSync(file, 'w');
    const fd = this.fd;
    const out = new ByteWriter() as unknown as ByteWriterLike;
    // Called by the writer after each row group and at the end: the buffer is written out and reused.
    out.flush = (): void => {
      if (out.index > 0) fs.writeSync(fd, new Uint8Array(out.buffer, 0, out.index));
      out.index = 0;
    };
    out.finish = out.flush;
    this.buffered = spec.columns.map(() => []);
    this.pq = new ParquetWriter({
      writer: out as unknown as InstanceType<HyparquetWriter['ByteWriter']>,
      schema: [{ name: 'root', num_children: spec.columns.length }, ...spec.columns.map(element)],
      codec,
      compressors: { GZIP: (b: Uint8Array) => zlib.gzipSync(b) },
      createdBy: CREATED_BY,
    });
  }

  /** One row, its values in the spec's column order. A bad value throws (and removes the file) when its row group is written. */
  add(values: readonly unknown[]): void {
    for (let i = 0; i < values.length; i++) this.buffered[i]!.push(values[i]);
    this.pending += 1;
    this.rows += 1;
    if (this.pending < this.groupRows) return;
    try {
      this.writeGroup();
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Writes the rows held as one row group (checked: a bad value throws naming its column). */
  private writeGroup(): void {
    if (this.pending === 0) return;
    const columnData = this.spec.columns.map((c, i) => ({ name: c.name, data: encode(c, this.buffered[i]!) }));
    for (const b of this.buffered) b.length = 0;
    const rows = this.pending;
    this.pending = 0;
    void this.pq.write({ columnData, rowGroupSize: rows });
  }

  /** Writes the last row group and the footer, closes the file and returns its size in bytes. On an error, the file is removed. */
  finish(): number {
    try {
      this.writeGroup();
      void this.pq.finish();
      const bytes = fs.fstatSync(this.fd).size;
      this.close();
      return bytes;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Gives the file up: closed and removed. */
  abort(): void {
    this.close();
    fs.rmSync(this.file, { force: true });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/**
 * Writes `columns` (one array per column of `spec`, in its order, all the same length) as one
 * Parquet file at `file` and returns the bytes written, the same bytes a ParquetSink given the same
 * rows writes. The caller writes to a temporary name and renames. `codec` is for the bench that chose
 * the default.
 */
export async function writeParquet(file: string, spec: DatasetSpec, columns: unknown[][], codec: Codec = DEFAULT_CODEC): Promise<number> {
  if (columns.length !== spec.columns.length) throw new Error(`export ${spec.name}: ${columns.length} columns for ${spec.columns.length} in the spec`);
  const rows = columns[0]?.length ?? 0;
  const uneven = columns.findIndex((c) => c.length !== rows);
  if (uneven >= 0) throw new Error(`export ${spec.name}: column ${spec.columns[uneven]!.name} has ${columns[uneven]!.length} values, not ${rows}`);
  // Checked whole before a byte is written: bad input leaves no file.
  spec.columns.forEach((c, i) => encode(c, columns[i]!));
  const sink = new ParquetSink(file, spec, codec);
  try {
    for (let r = 0; r < rows; r++) sink.add(columns.map((c) => c[r]));
  } catch (e) {
    sink.abort();
    throw e;
  }
  return sink.finish();
}
