// The Parquet writers `bench/export/export-libs.ts` compares, each behind the sink's signature
// (src/export/parquet.ts): (file, spec, columns, codec) -> bytes written. Candidates that are not
// project dependencies are loaded by path from a folder given on the command line, so each is typed
// here by the few members called (a structural type of what is used, not the library's own types).
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ColumnSpec, DatasetSpec } from '../../src/export/columns';
import { writeParquet, type Codec } from '../../src/export/parquet';

export type Writer = (file: string, spec: DatasetSpec, columns: unknown[][]) => Promise<number>;

export interface Candidate {
  name: string;
  /** The npm packages it needs (what `npm install` adds). */
  packages: string[];
  codecs: string[];
  /** Loads the packages from `modules` (a node_modules folder's parent) and returns a writer for the codec. */
  load(modules: string, codec: string): Promise<Writer>;
}

/** import() of a package as installed under `modules` (its node_modules), whatever the bench's own folder. */
async function importFrom<T>(modules: string, pkg: string): Promise<T> {
  const resolved = createRequire(path.join(modules, 'package.json')).resolve(pkg);
  return (await import(pathToFileURL(resolved).href)) as T;
}

const DAY_MS = 86_400_000;
const days = (v: unknown): number => Date.parse(v as string) / DAY_MS;
const millis = (v: unknown): number => Date.parse(v as string);

// --- hyparquet-writer (pure JS): the project's sink, src/export/parquet.ts -------------------

const hyparquet: Candidate = {
  name: 'hyparquet-writer',
  packages: ['hyparquet-writer'],
  codecs: ['GZIP', 'SNAPPY'],
  async load(_modules, codec) {
    // The winner is a project dependency: measured as the export writes, through its sink (which
    // loads it on first use: one write now, so a missing package is reported as not installed).
    await writeParquet(path.join(os.tmpdir(), `probe-${process.pid}.parquet`), { name: 'probe', description: '', columns: [] }, []);
    return (file, spec, columns) => writeParquet(file, spec, columns, codec as Codec);
  },
};

// --- parquet-wasm (Rust's parquet crate in WebAssembly) + apache-arrow -------------------------

interface ArrowType { readonly typeId: number }
interface ArrowData { readonly length: number }
interface Arrow {
  Utf8: new () => ArrowType; Int32: new () => ArrowType; Int64: new () => ArrowType; Float64: new () => ArrowType;
  Bool: new () => ArrowType; DateDay: new () => ArrowType; TimestampMillisecond: new (tz?: string) => ArrowType;
  Struct: new (fields: unknown[]) => ArrowType;
  Field: new (name: string, type: ArrowType, nullable: boolean) => unknown;
  Schema: new (fields: unknown[]) => unknown;
  RecordBatch: new (schema: unknown, data: ArrowData) => unknown;
  Table: new (batches: unknown[]) => unknown;
  makeData(o: object): ArrowData;
  vectorFromArray(values: unknown[], type: ArrowType): { data: ArrowData[] };
  tableToIPC(table: unknown, kind: 'stream'): Uint8Array;
}
interface ParquetWasm {
  Compression: Record<string, number>;
  Table: { fromIPCStream(ipc: Uint8Array): unknown };
  WriterPropertiesBuilder: new () => WasmPropsBuilder;
  writeParquet(table: unknown, props: unknown): Uint8Array;
}
interface WasmPropsBuilder {
  setCompression(c: number): WasmPropsBuilder;
  setCreatedBy(s: string): WasmPropsBuilder;
  setMaxRowGroupSize(n: number): WasmPropsBuilder;
  build(): unknown;
}

/** Arrow's validity bitmap for `values` (bit set = present), and its null count. */
function validity(values: unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  values.forEach((v, i) => { if (v === null) nullCount++; else nullBitmap[i >> 3]! |= 1 << (i & 7); });
  return { nullBitmap, nullCount };
}

function arrowData(a: Arrow, c: ColumnSpec, values: unknown[]): ArrowData {
  const fixed = (type: ArrowType, data: ArrayLike<unknown>): ArrowData => a.makeData({ type, length: values.length, ...validity(values), data });
  const nums = <T extends Int32Array | Float64Array>(Ctor: new (n: number) => T, f: (v: unknown) => number): T => {
    const out = new Ctor(values.length);
    values.forEach((v, i) => { if (v !== null) out[i] = f(v); });
    return out;
  };
  switch (c.type) {
    case 'string': return a.vectorFromArray(values, new a.Utf8()).data[0]!;
    case 'int32': return fixed(new a.Int32(), nums(Int32Array, Number));
    case 'double': return fixed(new a.Float64(), nums(Float64Array, Number));
    case 'date': return fixed(new a.DateDay(), nums(Int32Array, days));
    case 'boolean': {
      const bits = new Uint8Array((values.length + 7) >> 3);
      values.forEach((v, i) => { if (v === true) bits[i >> 3]! |= 1 << (i & 7); });
      return fixed(new a.Bool(), bits);
    }
    case 'int64':
    case 'timestamp': {
      const out = new BigInt64Array(values.length);
      const f = c.type === 'int64' ? Number : millis;
      values.forEach((v, i) => { if (v !== null) out[i] = BigInt(f(v)); });
      return fixed(c.type === 'int64' ? new a.Int64() : new a.TimestampMillisecond('UTC'), out);
    }
  }
}

const arrowType = (a: Arrow, c: ColumnSpec): ArrowType => ({
  string: () => new a.Utf8(), int32: () => new a.Int32(), int64: () => new a.Int64(), double: () => new a.Float64(),
  boolean: () => new a.Bool(), date: () => new a.DateDay(), timestamp: () => new a.TimestampMillisecond('UTC'),
})[c.type]();

const parquetWasm: Candidate = {
  name: 'parquet-wasm + apache-arrow',
  packages: ['parquet-wasm', 'apache-arrow'],
  codecs: ['SNAPPY', 'ZSTD'],
  async load(modules, codec) {
    const a = await importFrom<Arrow>(modules, 'apache-arrow');
    const pw = await importFrom<ParquetWasm>(modules, 'parquet-wasm');
    return async (file, spec, columns) => {
      const fields = spec.columns.map((c) => new a.Field(c.name, arrowType(a, c), c.nullable));
      const length = columns[0]?.length ?? 0;
      const data = a.makeData({ type: new a.Struct(fields), length, nullCount: 0, children: spec.columns.map((c, i) => arrowData(a, c, columns[i]!)) });
      const table = new a.Table([new a.RecordBatch(new a.Schema(fields), data)]);
      const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression[codec]!).setCreatedBy('visibility-api').setMaxRowGroupSize(1_000_000).build();
      const bytes = pw.writeParquet(pw.Table.fromIPCStream(a.tableToIPC(table, 'stream')), props);
      fs.writeFileSync(file, bytes);
      return bytes.byteLength;
    };
  },
};

// --- DuckDB (@duckdb/node-api): an appender into an in-memory table, then COPY ... TO ---------

interface DuckDB {
  DuckDBInstance: { create(path: string, options: Record<string, string>): Promise<{ connect(): Promise<DuckConn> }> };
  DuckDBDataChunk: { create(types: readonly unknown[], rows: number): { setColumns(cols: unknown[][]): void } };
  VARCHAR: unknown; INTEGER: unknown; BIGINT: unknown; DOUBLE: unknown; BOOLEAN: unknown;
}
interface DuckConn {
  run(sql: string): Promise<unknown>;
  createAppender(table: string): Promise<{ appendDataChunk(chunk: unknown): void; flushSync(): void; closeSync(): void }>;
}

const CHUNK = 2048; // DuckDB's vector size: a data chunk holds at most this many rows
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

const duckdb: Candidate = {
  name: '@duckdb/node-api',
  packages: ['@duckdb/node-api'],
  codecs: ['SNAPPY', 'ZSTD'],
  async load(modules, codec) {
    const d = await importFrom<DuckDB>(modules, '@duckdb/node-api');
    const conn = await (await d.DuckDBInstance.create(':memory:', { threads: '1' })).connect();
    // Dates and timestamps go in as text and are cast in the COPY's SELECT.
    const stage = { string: 'VARCHAR', int32: 'INTEGER', int64: 'BIGINT', double: 'DOUBLE', boolean: 'BOOLEAN', date: 'VARCHAR', timestamp: 'VARCHAR' } as const;
    const chunkType = { VARCHAR: d.VARCHAR, INTEGER: d.INTEGER, BIGINT: d.BIGINT, DOUBLE: d.DOUBLE, BOOLEAN: d.BOOLEAN };
    return async (file, spec, columns) => {
      await conn.run(`CREATE OR REPLACE TABLE stage (${spec.columns.map((c) => `${ident(c.name)} ${stage[c.type]}`).join(', ')})`);
      const appender = await conn.createAppender('stage');
      const types = spec.columns.map((c) => chunkType[stage[c.type]]);
      const length = columns[0]?.length ?? 0;
      for (let at = 0; at < length; at += CHUNK) {
        const n = Math.min(CHUNK, length - at);
        const chunk = d.DuckDBDataChunk.create(types, n);
        chunk.setColumns(spec.columns.map((c, i) => {
          const part = columns[i]!.slice(at, at + n);
          return c.type === 'int64' ? part.map((v) => (v === null ? null : BigInt(v as number))) : part;
        }));
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
      appender.closeSync();
      // TIMESTAMPTZ: DuckDB writes UTC-adjusted timestamps in microseconds only (TIMESTAMP_MS is written unadjusted).
      const select = spec.columns.map((c) => (c.type === 'date' ? `CAST(${ident(c.name)} AS DATE) AS ${ident(c.name)}`
        : c.type === 'timestamp' ? `CAST(${ident(c.name)} AS TIMESTAMPTZ) AS ${ident(c.name)}` : ident(c.name)));
      await conn.run(`COPY (SELECT ${select.join(', ')} FROM stage) TO '${file.replace(/'/g, "''")}' (FORMAT parquet, COMPRESSION ${codec})`);
      return fs.statSync(file).size;
    };
  },
};

// --- @dsnp/parquetjs (pure JS, row by row) ------------------------------------------------------

interface ParquetJs {
  ParquetSchema: new (fields: Record<string, object>) => unknown;
  ParquetWriter: { openFile(schema: unknown, file: string): Promise<{ appendRow(row: Record<string, unknown>): Promise<void>; close(): Promise<void> }> };
}

const parquetjsType = { string: 'UTF8', int32: 'INT32', int64: 'INT64', double: 'DOUBLE', boolean: 'BOOLEAN', date: 'DATE', timestamp: 'TIMESTAMP_MILLIS' } as const;

const parquetjs: Candidate = {
  name: '@dsnp/parquetjs',
  packages: ['@dsnp/parquetjs'],
  codecs: ['SNAPPY', 'GZIP'],
  async load(modules, codec) {
    const p = await importFrom<ParquetJs>(modules, '@dsnp/parquetjs');
    return async (file, spec, columns) => {
      const schema = new p.ParquetSchema(Object.fromEntries(spec.columns.map((c) => [c.name, { type: parquetjsType[c.type], optional: c.nullable, compression: codec }])));
      const writer = await p.ParquetWriter.openFile(schema, file);
      const length = columns[0]?.length ?? 0;
      for (let r = 0; r < length; r++) {
        const row: Record<string, unknown> = {};
        spec.columns.forEach((c, i) => {
          const v = columns[i]![r];
          if (v === null) return; // an absent key is a null
          row[c.name] = c.type === 'date' ? days(v) : c.type === 'timestamp' ? millis(v) : v;
        });
        await writer.appendRow(row);
      }
      await writer.close();
      return fs.statSync(file).size;
    };
  },
};

export const candidates: readonly Candidate[] = [hyparquet, parquetWasm, duckdb, parquetjs];
