// The export's Parquet sink, read back by an independent reader (pyarrow, through
// scripts/parquet-inspect.py): every column type with and without nulls comes back with the same
// values and the Parquet types a warehouse expects (UTF8 strings, DATE, TIMESTAMP(MILLIS, UTC),
// REQUIRED unless nullable); the same input gives the same bytes; bad input writes nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { DatasetSpec } from '../../src/export/columns';
import { ParquetSink, ROW_GROUP_ROWS, writeParquet } from '../../src/export/parquet';
import { ROOT } from '../helpers/paths';
import { pythonJson } from '../helpers/python';

interface Inspected {
  rows: number;
  row_groups: number;
  created_by: string;
  columns: Record<string, { physical: string; logical: string; repetition: string; arrow: string; nulls: number; values: unknown[] }>;
}

const inspect = (...files: string[]): Promise<Inspected> => pythonJson<Inspected>([path.join(ROOT, 'scripts', 'parquet-inspect.py'), '--values', ...files]);

const col = (name: string, type: DatasetSpec['columns'][number]['type'], nullable: boolean) => ({ name, type, nullable, description: name });

const spec: DatasetSpec = {
  name: 'every_type',
  description: 'each column type, required and nullable',
  columns: [
    col('s', 'string', false), col('s_null', 'string', true),
    col('i32', 'int32', false), col('i32_null', 'int32', true),
    col('i64', 'int64', false), col('i64_null', 'int64', true),
    col('d', 'double', false), col('d_null', 'double', true),
    col('b', 'boolean', false), col('b_null', 'boolean', true),
    col('day', 'date', false), col('day_null', 'date', true),
    col('at', 'timestamp', false), col('at_null', 'timestamp', true),
  ],
};

// Columns in spec order; edge values: non-ASCII text, int32 bounds, int64 past 2^32 and the largest
// safe integer, a leap day, a day before 1970, a timestamp's milliseconds.
const columns: unknown[][] = [
  ['plain', 'Zoho CRM — “quotes”', '日本語 ✓', ''],
  [null, 'x', null, 'Ünïcode'],
  [0, -2147483648, 2147483647, 42],
  [1, null, -7, null],
  [0, 2 ** 40 + 3, -(2 ** 35), Number.MAX_SAFE_INTEGER],
  [null, 5_000_000_000, null, -1],
  [0.5, -1.25, 1e-9, 0.21],
  [null, 3.14159, null, -0.47],
  [true, false, true, false],
  [null, true, false, null],
  ['2025-01-01', '2024-02-29', '1969-12-31', '1970-01-01'],
  ['2025-12-31', null, '2000-01-01', null],
  ['2025-11-16T08:38:19.000Z', '2024-02-29T23:59:59.999Z', '1970-01-01T00:00:00.001Z', '2026-06-30T12:00:00.123Z'],
  [null, '2025-01-01T00:00:00.000Z', null, '2025-03-30T01:30:00.500Z'],
];

// pyarrow's view of each type: the Arrow type it reads and the Parquet logical type in the file.
const expectedTypes: Record<string, { arrow: string; logical: RegExp }> = {
  string: { arrow: 'string', logical: /^String$/ },
  int32: { arrow: 'int32', logical: /^(None|Int\(bitWidth=32, isSigned=true\))$/ },
  int64: { arrow: 'int64', logical: /^(None|Int\(bitWidth=64, isSigned=true\))$/ },
  double: { arrow: 'double', logical: /^None$/ },
  boolean: { arrow: 'bool', logical: /^None$/ },
  date: { arrow: 'date32[day]', logical: /^Date$/ },
  timestamp: { arrow: 'timestamp[ms, tz=UTC]', logical: /^Timestamp\(isAdjustedToUTC=true, timeUnit=milliseconds/ },
};

const tmp = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parquet-sink-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test('every type, with nulls, reads back with pyarrow: values, logical types, repetition', async (t) => {
  const file = path.join(tmp(), 'part-0.parquet');
  const bytes = await writeParquet(file, spec, columns);
  t.equal(bytes, fs.statSync(file).size, 'returns the bytes written');
  const got = await inspect(file);
  t.equal(got.rows, 4);
  t.same(Object.keys(got.columns), spec.columns.map((c) => c.name), 'columns in spec order');
  spec.columns.forEach((c, i) => {
    const g = got.columns[c.name]!;
    t.same(g.values, columns[i], `${c.name}: values`);
    t.equal(g.arrow, expectedTypes[c.type]!.arrow, `${c.name}: read as ${expectedTypes[c.type]!.arrow}`);
    t.match(g.logical, expectedTypes[c.type]!.logical, `${c.name}: Parquet logical type`);
    t.equal(g.repetition, c.nullable ? 'OPTIONAL' : 'REQUIRED', `${c.name}: ${c.nullable ? 'nullable' : 'required'}`);
  });
  t.equal(got.columns.s!.physical, 'BYTE_ARRAY');
  t.equal(got.columns.at!.physical, 'INT64');
  t.equal(got.columns.day!.physical, 'INT32');
});

t.test('the same input gives the same bytes; no clock or version in the file', async (t) => {
  const dir = tmp();
  const a = path.join(dir, 'a.parquet');
  const b = path.join(dir, 'b.parquet');
  await writeParquet(a, spec, columns);
  await new Promise((r) => setTimeout(r, 20)); // a later clock must not change the bytes
  await writeParquet(b, spec, columns);
  t.ok(fs.readFileSync(a).equals(fs.readFileSync(b)), 'byte-identical');
  t.equal((await inspect(a)).created_by, 'visibility-api export');
});

t.test('a dataset with no rows is a valid file with the schema', async (t) => {
  const file = path.join(tmp(), 'empty.parquet');
  await writeParquet(file, spec, spec.columns.map(() => []));
  const got = await inspect(file);
  t.equal(got.rows, 0);
  t.equal(got.columns.at!.arrow, 'timestamp[ms, tz=UTC]');
});

t.test('bad input throws naming the column and writes no file', async (t) => {
  const dir = tmp();
  const file = path.join(dir, 'bad.parquet');
  const with1 = (i: number, v: unknown): unknown[][] => columns.map((c, j) => (j === i ? [v, ...c.slice(1)] : c));
  const idx = (name: string): number => spec.columns.findIndex((c) => c.name === name);
  await t.rejects(writeParquet(file, spec, with1(idx('s'), null)), /column s \(string\): bad value null/, 'null in a required column');
  await t.rejects(writeParquet(file, spec, with1(idx('day'), '2025-1-1')), /column day \(date\)/, 'a date not YYYY-MM-DD');
  await t.rejects(writeParquet(file, spec, with1(idx('at'), '2025-01-01 00:00:00')), /column at \(timestamp\)/, 'a timestamp not ISO UTC with milliseconds');
  await t.rejects(writeParquet(file, spec, with1(idx('i32'), 2 ** 31)), /column i32 \(int32\)/, 'an int32 out of range');
  await t.rejects(writeParquet(file, spec, with1(idx('i64'), 2 ** 53)), /column i64 \(int64\)/, 'an int64 past the safe integers');
  await t.rejects(writeParquet(file, spec, with1(idx('i32'), 1.5)), /column i32 \(int32\)/, 'a fraction in an integer column');
  await t.rejects(writeParquet(file, spec, columns.map((c, j) => (j === 3 ? c.slice(1) : c))), /column i32_null has 3 values, not 4/, 'uneven columns');
  await t.rejects(writeParquet(file, spec, columns.slice(1)), /13 columns for 14/, 'a column missing');
  t.notOk(fs.existsSync(file), 'nothing written');
});

// Rows of `columns` cycled to n rows, row by row.
const rowsOf = (n: number): unknown[][] => Array.from({ length: n }, (_, r) => columns.map((c) => c[r % c.length]));

t.test('a sink writes its rows a row group at a time; pyarrow reads them back whole, in order', async (t) => {
  const file = path.join(tmp(), 'groups.parquet');
  const sink = new ParquetSink(file, spec, 'GZIP', 3);
  const rows = rowsOf(10);
  for (const r of rows) sink.add(r);
  t.equal(sink.rows, 10);
  const bytes = sink.finish();
  t.equal(bytes, fs.statSync(file).size, 'returns the bytes written');
  const got = await inspect(file);
  t.equal(got.rows, 10);
  t.equal(got.row_groups, 4, 'groups of 3, 3, 3 and 1 rows');
  spec.columns.forEach((c, i) => t.same(got.columns[c.name]!.values, rows.map((r) => r[i]), `${c.name}: values`));
});

t.test('the same rows give the same bytes whether held whole or streamed; a partition within one group is one row group', async (t) => {
  const dir = tmp();
  const whole = path.join(dir, 'whole.parquet');
  const streamed = path.join(dir, 'streamed.parquet');
  const rows = rowsOf(ROW_GROUP_ROWS + 5);
  await writeParquet(whole, spec, spec.columns.map((_, i) => rows.map((r) => r[i])));
  const sink = new ParquetSink(streamed, spec);
  for (const r of rows) sink.add(r);
  sink.finish();
  t.ok(fs.readFileSync(whole).equals(fs.readFileSync(streamed)), 'byte-identical');
  t.equal((await inspect(whole)).row_groups, 2, `${ROW_GROUP_ROWS} rows a group`);
  const small = path.join(dir, 'small.parquet');
  await writeParquet(small, spec, columns);
  t.equal((await inspect(small)).row_groups, 1);
});

t.test('a bad value in a streamed file throws naming the column and leaves no file', async (t) => {
  const dir = tmp();
  const bad = [...rowsOf(2)[1]!];
  bad[2] = 2 ** 31;
  const full = path.join(dir, 'bad-group.parquet');
  const sink = new ParquetSink(full, spec, 'GZIP', 2);
  sink.add(rowsOf(1)[0]!);
  t.throws(() => sink.add(bad), /column i32 \(int32\)/, 'when its row group is written');
  t.notOk(fs.existsSync(full), 'the file is removed');
  const last = path.join(dir, 'bad-last.parquet');
  const tail = new ParquetSink(last, spec, 'GZIP', 2);
  tail.add(bad);
  t.throws(() => tail.finish(), /column i32 \(int32\)/, 'in the last row group, at finish');
  t.notOk(fs.existsSync(last), 'the file is removed');
});
