// Builds are shared fairly between accounts (builders.ts, fair-queue.ts), over real HTTP against a
// service with one build thread. The thread waits at a gate the test holds closed while it lines
// requests up, and logs whose job it builds, so the order of builds is counted, not timed:
// - one account's backlog does not hold another's requests: builds alternate between accounts;
// - one account has at most maxBuildsPerAccount builds queued or running: past it, a 429 with
//   Retry-After, or the body the cache holds, stale; another account is not refused meanwhile;
// - a stale-while-revalidate rebuild waits behind every cold build;
// - with two threads, an account builds on one at most: another account's build starts at once
//   while the first account's builds are held, however many it has waiting.
import path from 'node:path';
import t, { type Test } from 'tap';
import { startWorker } from '../../src/lib/worker';
import { ThreadBuilder, type StartBuildThread } from '../../src/serve/bodies/builders';
import { STALE_CACHE_STATUS } from '../../src/serve/http/send';
import type { Projector } from '../../src/store';
import { freshDb } from '../helpers/db';
import { asSource, id, run, W, world } from '../helpers/events';
import { request, startApi, withKey, type Api, type Reply } from '../helpers/http';
import { postMcp, toolCall } from '../helpers/mcp';
import type { AppOptions } from '../../src/serve';

const A = W.account;
const B = W.otherAccount;
/** What the log calls each account's builds of each project: A and B their own, A2 A's of B's project. */
const TAGS: Record<string, string> = { [`${A}|${W.project}`]: 'A', [`${B}|${W.otherProject}`]: 'B', [`${A}|${W.otherProject}`]: 'A2' };

/** The gate and the log the build thread shares with the test (fair-builds.worker.ts). */
class Gate {
  readonly shared = new Int32Array(new SharedArrayBuffer(68 * Int32Array.BYTES_PER_ELEMENT));
  readonly start: StartBuildThread = (data) => startWorker(path.join(__dirname, 'fair-builds.ts'), { ...data, shared: this.shared.buffer, tags: Object.keys(TAGS) });

  close(): void {
    Atomics.store(this.shared, 0, 0);
  }

  open(): void {
    Atomics.store(this.shared, 0, 1);
    Atomics.notify(this.shared, 0);
  }

  /** While closed, the gate holds only the jobs of `tag` (a name of TAGS), or every job (null). */
  holdOnly(tag: string | null): void {
    Atomics.store(this.shared, this.shared.length - 2, tag === null ? 0 : Object.values(TAGS).indexOf(tag) + 1);
    Atomics.notify(this.shared, 0);
  }

  /** From now on the time a job is held at the gate counts as its build time (as a slow build's would), or not. */
  slow(on: boolean): void {
    Atomics.store(this.shared, this.shared.length - 1, on ? 1 : 0);
  }

  /** Whose jobs were built so far, in order (TAGS' names). */
  log(): string[] {
    const n = Math.min(Atomics.load(this.shared, 1), this.shared.length - 4);
    const names = Object.values(TAGS);
    return Array.from(this.shared.subarray(2, 2 + n), (c) => names[c - 1] ?? '?');
  }
}

interface Setup { api: Api; gate: Gate; builder: ThreadBuilder; projector: Projector }

async function setup(tt: Test, maxBuildsPerAccount = 16, maxStalenessMs = 0, more: Partial<AppOptions> = {}, buildThreads = 1): Promise<Setup> {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 }), run({ n: 2, brand: 2, engine: W.engineB })]));
  const gate = new Gate();
  gate.open();
  const api = await startApi({ db, buildThreads, startBuildThread: gate.start, maxBuildsPerAccount, maxStalenessMs, rebuildCoalesceMs: 0, ...more });
  tt.teardown(async () => {
    gate.open();
    await api.close();
  });
  if (!(api.service.builder instanceof ThreadBuilder)) throw new Error('expected build threads');
  return { api, gate, builder: api.service.builder, projector };
}

/** A distinct cold key per `i`: the project's visibility over a range starting on day i. */
const coldPath = (project: string, i: number): string => `/projects/${project}/visibility?start_date=2026-01-${String(i).padStart(2, '0')}&end_date=2026-01-28`;

/** Resolves once the builder counts `queued` waiting and `running` in the thread for the account. */
async function lined(b: ThreadBuilder, account: string, queued: number, running: number): Promise<void> {
  for (let i = 0; i < 4000; i++) {
    const a = b.accounts().get(account);
    if ((a?.queued ?? 0) === queued && (a?.running ?? 0) === running) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  const a = b.accounts().get(account);
  throw new Error(`builder never had ${queued} queued / ${running} running for ${account}: ${JSON.stringify(a)}`);
}

t.test('one account\'s backlog does not hold another\'s builds: counted builds take turns between accounts', async (t) => {
  const { api, gate, builder } = await setup(t);
  gate.close();
  const get = (key: string, project: string, i: number): Promise<Reply> => request(api.base + coldPath(project, i), withKey(key));
  const replies: Array<Promise<Reply>> = [get(W.key, W.project, 1)];
  await lined(builder, A, 0, 1); // A's first build is in the thread, held at the gate
  for (let i = 2; i <= 6; i++) replies.push(get(W.key, W.project, i));
  await lined(builder, A, 5, 1);
  for (let i = 1; i <= 3; i++) replies.push(get(W.otherKey, W.otherProject, i));
  await lined(builder, B, 3, 0);
  gate.open();
  const got = await Promise.all(replies);
  t.same(got.map((r) => r.status), got.map(() => 200), 'every request answered 200');
  // Quick builds take turns (A B A B A B A A A); a build of A's that happened to take longer than
  // a quantum lets B go twice. Either way B's builds are not behind A's backlog: the first goes right
  // after the build A had in hand, the last before A's fourth.
  const log = gate.log();
  t.equal(log.length, 9, `nine builds: ${log.join(' ')}`);
  t.equal(log[1], 'B', 'B\'s first build goes right after the one A had in hand');
  const fourthA = log.map((x, i) => (x === 'A' ? i : -1)).filter((i) => i >= 0)[3]!;
  t.ok(log.lastIndexOf('B') < fourthA, `all of B's builds before A's fourth: ${log.join(' ')}`);
  const stats = builder.accounts();
  t.equal(stats.get(A)?.builds, 6, 'six builds counted for A');
  t.equal(stats.get(B)?.builds, 3, 'three for B');
});

t.test('served by build time: an account whose build took long waits while another\'s quick builds go', async (t) => {
  const { api, gate, builder } = await setup(t);
  t.equal((await request(api.base + coldPath(W.project, 27), withKey(W.key))).status, 200, 'the thread started');
  gate.slow(true);
  gate.close();
  const get = (key: string, project: string, i: number): Promise<Reply> => request(api.base + coldPath(project, i), withKey(key));
  const replies: Array<Promise<Reply>> = [get(W.key, W.project, 1)];
  await lined(builder, A, 0, 1);
  for (let i = 2; i <= 4; i++) replies.push(get(W.key, W.project, i));
  await lined(builder, A, 3, 1);
  for (let i = 1; i <= 3; i++) replies.push(get(W.otherKey, W.otherProject, i));
  await lined(builder, B, 3, 0);
  await new Promise((r) => setTimeout(r, 300)); // A's build in hand takes 300 ms or more: many quanta
  gate.open();
  t.same((await Promise.all(replies)).map((r) => r.status), replies.map(() => 200));
  gate.slow(false);
  t.same(gate.log(), ['A', 'A', 'B', 'B', 'B', 'A', 'A', 'A'], 'after A\'s long build, B\'s quick builds all go before A\'s next');
});

t.test('with two threads an account builds on one at most: another account\'s builds start while its own are held', async (t) => {
  const { api, gate, builder } = await setup(t, 16, 0, {}, 2);
  gate.holdOnly('A');
  gate.close();
  const get = (key: string, project: string, i: number): Promise<Reply> => request(api.base + coldPath(project, i), withKey(key));
  const held: Array<Promise<Reply>> = [];
  for (let i = 1; i <= 4; i++) held.push(get(W.key, W.project, i));
  await lined(builder, A, 3, 1);
  t.pass('A\'s first build is held in one thread; its other three wait, though the other thread is idle');
  for (let i = 1; i <= 3; i++) {
    const r = await get(W.otherKey, W.otherProject, i);
    t.equal(r.status, 200, `B's build ${i} answered while A's build is still held`);
  }
  t.same(gate.log(), ['B', 'B', 'B'], 'B\'s three builds went through the other thread, none of A\'s yet');
  const a = builder.accounts().get(A);
  t.same([a?.queued, a?.running], [3, 1], 'A still holds one thread, three builds waiting');
  gate.holdOnly(null);
  gate.open();
  t.same((await Promise.all(held)).map((r) => r.status), [200, 200, 200, 200], 'A\'s builds answered once the gate opens');
  t.same(gate.log(), ['B', 'B', 'B', 'A', 'A', 'A', 'A']);
  t.equal(builder.accounts().get(A)?.builds, 4);
  t.equal(builder.accounts().get(B)?.builds, 3);
});

t.test('within an account, its projects take turns too', async (t) => {
  const { api, gate, builder, projector } = await setup(t);
  // A sees B's project too (shared): its builds of either project are A's.
  projector.applyBatch(asSource([{ event_id: id(77, 'eeeeeeee'), type: 'project.access_granted', schema_version: 1, occurred_at: '2026-01-02T00:00:00.000Z', data: { project_id: W.otherProject, account_id: A } }], 'grant'));
  gate.close();
  const got: Array<Promise<Reply>> = [request(api.base + coldPath(W.project, 1), withKey(W.key))];
  await lined(builder, A, 0, 1);
  for (let i = 2; i <= 4; i++) got.push(request(api.base + coldPath(W.project, i), withKey(W.key)));
  await lined(builder, A, 3, 1);
  got.push(request(api.base + coldPath(W.otherProject, 1), withKey(W.key)));
  await lined(builder, A, 4, 1);
  gate.open();
  const replies = await Promise.all(got);
  t.same(replies.map((r) => r.status), [200, 200, 200, 200, 200]);
  t.same(gate.log(), ['A', 'A2', 'A', 'A', 'A'], 'the other project\'s build is second, not behind the first project\'s');
  t.equal(builder.accounts().get(A)?.builds, 5);
  t.equal(builder.accounts().get(B), undefined, 'nothing charged to the project\'s owner: builds count for who asked');
});

t.test('past its cap an account gets 429 with Retry-After, or the cached body stale; another account is not refused', async (t) => {
  const CAP = 3;
  const { api, gate, builder, projector } = await setup(t, CAP);
  const cachedPath = api.base + coldPath(W.project, 20);
  const first = await request(cachedPath, withKey(W.key));
  t.equal(first.status, 200, 'a body cached for A');
  // The data moves on: with maxStalenessMs 0, that body may no longer be served as it stands.
  projector.applyBatch(asSource([run({ n: 3, brand: 1, day: '2026-01-21' })], 'more'));
  gate.close();
  const held: Array<Promise<Reply>> = [];
  for (let i = 1; i <= CAP; i++) held.push(request(api.base + coldPath(W.project, i), withKey(W.key)));
  await lined(builder, A, CAP - 1, 1);
  const refused = await request(api.base + coldPath(W.project, 9), withKey(W.key));
  t.equal(refused.status, 429, 'a cold key past the cap: 429');
  t.equal(refused.headers['retry-after'], '1', 'with Retry-After');
  t.equal(refused.headers['x-error-code'], 'rate_limited');
  t.match((refused.json as { message: string }).message, /at most 3 at once/);
  const stale = await request(cachedPath, withKey(W.key));
  t.equal(stale.status, 200, 'a key the cache holds: its body');
  t.equal(stale.headers['cache-status'], STALE_CACHE_STATUS, 'marked stale');
  t.equal(stale.headers.etag, first.headers.etag, 'the held body');
  const other = request(api.base + coldPath(W.otherProject, 1), withKey(W.otherKey));
  await lined(builder, B, 1, 0);
  t.pass('another account\'s build is queued, not refused');
  gate.open();
  t.same((await Promise.all(held)).map((r) => r.status), [200, 200, 200], 'A\'s builds under the cap answered');
  t.equal((await other).status, 200, 'B answered');
  t.equal(builder.accounts().get(A)?.refused, 2, 'two refusals counted for A');
  const fresh = await request(cachedPath, withKey(W.key));
  t.equal(fresh.headers['cache-status'], undefined, 'under the cap again: the current body');
});

t.test('a stale-while-revalidate rebuild waits behind every cold build, its own account\'s and others\'', async (t) => {
  const { api, gate, builder, projector } = await setup(t, 16, 60_000);
  const cachedPath = api.base + coldPath(W.project, 20);
  t.equal((await request(cachedPath, withKey(W.key))).status, 200, 'a body cached for A');
  projector.applyBatch(asSource([run({ n: 3, brand: 1, day: '2026-01-21' })], 'more'));
  gate.close();
  const replies: Array<Promise<Reply>> = [request(api.base + coldPath(W.project, 1), withKey(W.key))];
  await lined(builder, A, 0, 1);
  replies.push(request(api.base + coldPath(W.otherProject, 1), withKey(W.otherKey)));
  await lined(builder, B, 1, 0);
  const stale = await request(cachedPath, withKey(W.key));
  t.equal(stale.headers['cache-status'], STALE_CACHE_STATUS, 'A\'s cached body served stale, its rebuild queued');
  await lined(builder, A, 1, 1);
  replies.push(request(api.base + coldPath(W.otherProject, 2), withKey(W.otherKey)));
  await lined(builder, B, 2, 0);
  gate.open();
  t.same((await Promise.all(replies)).map((r) => r.status), [200, 200, 200]);
  for (let i = 0; i < 4000 && gate.log().length < 5; i++) await new Promise((r) => setTimeout(r, 5));
  t.same(gate.log().slice(1), ['A', 'B', 'B', 'A'], 'B\'s later cold build goes before A\'s rebuild');
});

t.test('a build is charged by the time it took, over HTTP and MCP alike, to the key\'s one budget', async (t) => {
  // The limiter's clock stopped: only charges move the bucket. 1000 a second: a burst of 2000.
  const { api, gate, builder } = await setup(t, 16, 0, { rateLimit: 1000, rateLimitClock: () => 0 });
  const rOf = (r: Reply): number => Number(/;r=(\d+);/.exec(String(r.headers.ratelimit))?.[1] ?? NaN);
  const HELD_MS = 200;
  const hold = async (): Promise<void> => {
    // The build takes at least HELD_MS by the thread's own clock: the gate holds it longer, since the job
    // reaches the thread a little after it is lined up here (and a loaded machine makes that longer).
    await new Promise((r) => setTimeout(r, HELD_MS + 100));
    gate.open();
  };
  // The thread is started (its first job waits for that): a job now is in its hands at once.
  t.equal((await request(api.base + coldPath(W.project, 27), withKey(W.key))).status, 200);
  gate.slow(true);
  gate.close();
  const miss = request(api.base + coldPath(W.project, 1), withKey(W.key));
  await lined(builder, A, 0, 1);
  await hold();
  const built = await miss;
  t.equal(built.status, 200);
  t.ok(rOf(built) <= 2000 - 1 - HELD_MS / 50, `a build of ${HELD_MS} ms or more costs 1 + ${HELD_MS / 50} or more (r=${rOf(built)})`);
  const hit = await request(api.base + coldPath(W.project, 1), withKey(W.key));
  t.equal(rOf(built) - rOf(hit), 1, 'the cached body then costs one request');

  gate.close();
  const origin = api.base.replace(/\/v1\/public$/, '');
  const call = postMcp(origin, W.key, JSON.stringify(toolCall(1, 'visibility', { project_id: W.project, start_date: '2026-01-02', end_date: '2026-01-28' })));
  await lined(builder, A, 0, 1);
  await hold();
  t.equal((await call).status, 200);
  const after = await request(api.base + coldPath(W.project, 1), withKey(W.key));
  t.ok(rOf(hit) - rOf(after) >= 1 + 1 + HELD_MS / 50, `the MCP call's build was charged to the same key (r ${rOf(hit)} -> ${rOf(after)})`);
});
