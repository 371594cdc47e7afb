// The CPU floor of the ingestion write path, per event: decodeEvent over a log's lines held in
// memory, and readLines + JSON.parse over the file. Compiled code only (it loads dist/), and with
// --base <dir> the same figures for another build (e.g. an older commit's, built with
// `tsc -p tsconfig.build.json` in a `git archive` of it), alternating rounds, so a shared, noisy
// machine slows both alike.
//
//   npm run build && npx tsx scripts/bench-decode.ts [--file bench/out/ingest-s7-25x28.ndjson] [--rounds 3] [--base /tmp/old/dist]
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface Build {
  name: string;
  decodeEvent: (raw: string) => { ok: boolean };
  readLines: (file: string) => AsyncIterable<string>;
  readLineBatches?: (file: string) => AsyncIterable<string[]>;
}

async function load(name: string, dist: string): Promise<Build> {
  // Compiled modules of a build chosen at run time: typed here by what is used of them.
  const url = (file: string): string => pathToFileURL(path.resolve(dist, file)).href;
  const decode = (await import(url('src/events/decode.js'))) as Pick<Build, 'decodeEvent'>;
  // line-reader.js was lines.js before the file was renamed: a base build may be older.
  const lines = (await import(url(fs.existsSync(path.resolve(dist, 'src/ingest/line-reader.js')) ? 'src/ingest/line-reader.js' : 'src/ingest/lines.js'))) as Pick<Build, 'readLines' | 'readLineBatches'>;
  return { name, decodeEvent: decode.decodeEvent, readLines: lines.readLines, readLineBatches: lines.readLineBatches };
}

const { values } = parseArgs({
  options: {
    file: { type: 'string', default: 'bench/out/ingest-s7-25x28.ndjson' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string' },
  },
});
const file = path.resolve(values.file!);
const rounds = Number(values.rounds);

async function linesOf(f: string): Promise<string[]> {
  const out: string[] = [];
  for await (const l of readline.createInterface({ input: fs.createReadStream(f), crlfDelay: Infinity })) if (l.trim() !== '') out.push(l);
  return out;
}

function usPer(start: bigint, n: number): number {
  return Number(process.hrtime.bigint() - start) / 1e3 / n;
}

async function main(): Promise<void> {
  const builds = [await load('this build', path.join(__dirname, '..', 'dist'))];
  if (values.base) builds.push(await load(`base (${values.base})`, values.base));
  const lines = await linesOf(file);
  console.log(`${file}: ${lines.length} events, ${(fs.statSync(file).size / lines.length / 1024).toFixed(2)} KB each`);
  const all = new Map<string, number[]>();
  const keep = (key: string, us: number): void => {
    all.set(key, [...(all.get(key) ?? []), us]);
  };
  for (let r = 1; r <= rounds; r++) {
    let start = process.hrtime.bigint();
    for (const l of lines) JSON.parse(l);
    const parse = usPer(start, lines.length);
    console.log(`round ${r} JSON.parse alone, in memory: ${parse.toFixed(2)} us/event`);
    keep('JSON.parse alone, in memory', parse);
    // Alternate the order too: the second one of a round runs on a warmer heap.
    const order = r % 2 === 1 ? builds : [...builds].reverse();
    for (const b of order) {
      start = process.hrtime.bigint();
      let ok = 0;
      for (const l of lines) if (b.decodeEvent(l).ok) ok++;
      const decode = usPer(start, lines.length);
      if (ok !== lines.length) throw new Error(`${b.name}: ${lines.length - ok} events rejected`);
      start = process.hrtime.bigint();
      let n = 0;
      for await (const l of b.readLines(file)) if (l.trim() !== '' && JSON.parse(l)) n++;
      const read = usPer(start, n);
      let batches = NaN;
      if (b.readLineBatches) {
        start = process.hrtime.bigint();
        n = 0;
        for await (const batch of b.readLineBatches(file)) for (const l of batch) if (l.trim() !== '' && JSON.parse(l)) n++;
        batches = usPer(start, n);
      }
      console.log(`round ${r} ${b.name}: decodeEvent ${decode.toFixed(2)} us/event, readLines + JSON.parse ${read.toFixed(2)} us/event` +
        (Number.isNaN(batches) ? '' : `, readLineBatches + JSON.parse ${batches.toFixed(2)} us/event`));
      keep(`${b.name} decodeEvent`, decode);
      keep(`${b.name} readLines + JSON.parse`, read);
      if (!Number.isNaN(batches)) keep(`${b.name} readLineBatches + JSON.parse`, batches);
    }
  }
  console.log(`best (median) of ${rounds} rounds:`);
  for (const [k, runs] of all) {
    const sorted = [...runs].sort((a, b) => a - b);
    const best = sorted[0]!;
    const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
    console.log(`  ${k}: ${best.toFixed(2)} us/event (${median.toFixed(2)}), ${Math.round(1e6 / best).toLocaleString('en-US')} events/s`);
  }
}

void main();
