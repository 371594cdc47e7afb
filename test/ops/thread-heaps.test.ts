// /metrics shows the V8 heap of every worker thread (src/lib/thread-heap.ts): the main thread's
// nodejs_heap_* figures leave out the build threads, and an operator reading memory needs them.
import path from 'node:path';
import t from 'tap';
import { start } from '../../src/index';
import { BUILD_HEAP_MB, BUILD_YOUNG_MB } from '../../src/serve/bodies/builders';
import { openDb, Projector } from '../../src/store';
import { asSource, world } from '../helpers/events';
import { capturedLogger } from '../helpers/log';
import { until } from '../helpers/wait';

t.test('each build thread reports its heap on /metrics, used, total and its limit', async (t) => {
  const file = path.join(t.testdir(), 'heaps.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource(world()));
  db.close();
  const { logger } = capturedLogger();
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', buildThreads: 2, logger });
  t.teardown(() => running.close());
  type Heap = { used: number; total: number; limit: number };
  const heaps = async (): Promise<Map<string, Heap>> => {
    const text = await (await fetch(`${running.opsUrl}/metrics`)).text();
    const out = new Map<string, Heap>();
    for (const m of text.matchAll(/^visibility_thread_heap_bytes\{thread="([^"]+)",kind="(used|total|limit)"\} (\d+)$/gm)) {
      const h = out.get(m[1]!) ?? { used: 0, total: 0, limit: 0 };
      h[m[2] as keyof Heap] = Number(m[3]);
      out.set(m[1]!, h);
    }
    return out;
  };
  // Each thread reports as it starts and every 5 s after: wait for both build threads.
  let seen = new Map<string, Heap>();
  await until(async () => [...(seen = await heaps()).keys()].filter((k) => k.startsWith('builders-')).length >= 2, 7000, 50);
  const builders = [...seen].filter(([k]) => k.startsWith('builders-'));
  t.equal(builders.length, 2, `two build threads: ${[...seen.keys()].join(', ')}`);
  for (const [name, h] of builders) {
    t.ok(h.used > 1 << 20, `${name}: a heap in use (${h.used} bytes)`);
    t.ok(h.total >= h.used, `${name}: total >= used`);
    // Old generation and young generation capped (V8's own young generation alone would be 48 MB):
    // V8's limit is the two caps, with a few MB of its own.
    const capped = (BUILD_HEAP_MB + BUILD_YOUNG_MB + 12) * 2 ** 20;
    t.ok(h.limit >= h.total && h.limit <= capped, `${name}: limit ${h.limit} bytes, within ${BUILD_HEAP_MB} + ${BUILD_YOUNG_MB} MB (and a few of V8's)`);
  }
});
