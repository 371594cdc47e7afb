// One naming rule (README "Names"): a file name says one thing across src/, and every
// thread is a pair `<name>.ts` (the parent side, which starts it with startWorker(__filename, ...))
// and `<name>.worker.ts` (the code the thread runs) beside it. A rename that breaks either fails here.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths';

const root = ROOT;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const read = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8');

// Basenames several folders may use, each for the same thing. index.ts: a folder's public face.
// Nothing else: an endpoint file is named after its endpoint, and no other file takes that name.
const SHARED_NAMES = new Set(['index.ts']);

t.test('no two files under src/ share a name', async (t) => {
  const byName = new Map<string, string[]>();
  for (const f of tsFiles('src')) byName.set(path.basename(f), [...(byName.get(path.basename(f)) ?? []), f]);
  const repeated = [...byName].filter(([name, files]) => files.length > 1 && !SHARED_NAMES.has(name)).map(([, files]) => files);
  t.same(repeated, [], 'each basename once (index.ts aside)');
});

// The thread pairs of the service and of the benches.
const files = [...tsFiles('src'), ...tsFiles('bench')];
const WORKER = /\.worker\.ts$/;
// What only the code running in a thread reads: its port to the parent, its start data.
const THREAD_SIDE = /import\s*\{[^}]*\b(parentPort|workerData)\b[^}]*\}\s*from\s*'node:worker_threads'/;
const STARTS = /\bstartWorker\(/g;

t.test('every thread is a <name>.ts / <name>.worker.ts pair', async (t) => {
  for (const f of files) {
    const text = read(f);
    const starts = [...text.matchAll(STARTS)].length;
    if (f === path.join('src', 'lib', 'worker.ts')) continue; // where startWorker is defined
    if (starts > 0) {
      t.equal(text.match(/\bstartWorker\(__filename,/g)?.length, starts, `${f} starts its own pair's thread (startWorker(__filename, ...))`);
      t.ok(fs.existsSync(path.join(root, f.replace(/\.ts$/, '.worker.ts'))), `${f}: its thread's code is ${path.basename(f, '.ts')}.worker.ts`);
    }
    if (THREAD_SIDE.test(text)) t.match(f, WORKER, `${f} runs in a thread: it is named <name>.worker.ts`);
    if (WORKER.test(f)) {
      const parent = f.replace(WORKER, '.ts');
      t.ok(fs.existsSync(path.join(root, parent)) && /\bstartWorker\(__filename,/.test(read(parent)), `${f} is started by ${parent}`);
    }
  }
  // Only startWorker makes threads in src/ (so every one follows the rule).
  const direct = tsFiles('src').filter((f) => f !== path.join('src', 'lib', 'worker.ts') && /\bnew Worker\(/.test(read(f)));
  t.same(direct, [], 'no `new Worker(` in src/ besides src/lib/worker.ts');
});
