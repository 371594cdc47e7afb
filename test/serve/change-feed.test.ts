// The live change feed: a real EventSource client against a real service over loopback
// while events are ingested through the projector. One `change` per committed change with increasing
// ids (the X-Data-Version the project's responses then carry); Last-Event-ID resumes with exactly the
// missed ones, or a `reset`; the same 401/404 as every route; the per-key cap (429); a revoked key or
// share ends the stream and the reconnect is refused; heartbeats; streams end when the service drains.
// And X-Data-As-Of on project responses. No timings are asserted: waits are for events.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { EventSource } from 'eventsource';
import { start } from '../../src/index';
import { openDb, Projector as ProjectorClass, type Db, type Projector } from '../../src/store';
import { asSource, ev, id, run, W, world } from '../helpers/events';
import { freshDb, tmpDir } from '../helpers/db';
import { silentLogger } from '../../src/lib/log';
import { request, startApi, withKey, type Api } from '../helpers/http';
import type { AppOptions } from '../../src/serve';

interface Got {
  type: string;
  id: string;
  data: { project_id: string; data_version: number; endpoints?: string[]; data_as_of: string | null };
}

/** An EventSource with an API key, which records every event and error it sees. */
class Client {
  readonly events: Got[] = [];
  readonly errors: Array<number | undefined> = [];
  readonly es: EventSource;
  private waiters: Array<() => void> = [];

  constructor(url: string, key: string, lastEventId?: string) {
    this.es = new EventSource(url, {
      // The first connection sends the given Last-Event-ID; a reconnection sends the client's own.
      fetch: (input, init) => {
        const own = init?.headers ?? {};
        const headers: Record<string, string> = { ...own, 'x-api-key': key };
        if (lastEventId !== undefined && !Object.keys(own).some((k) => k.toLowerCase() === 'last-event-id')) headers['last-event-id'] = lastEventId;
        return fetch(input, { ...init, headers });
      },
    });
    for (const type of ['ready', 'change', 'reset']) {
      this.es.addEventListener(type, (e) => {
        this.events.push({ type, id: e.lastEventId, data: JSON.parse(e.data as string) as Got['data'] });
        this.wake();
      });
    }
    this.es.onerror = (e) => {
      this.errors.push(e.code);
      this.wake();
    };
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves once `done()` holds, re-checked after every event and error; throws once the client gave up without it. */
  async until(done: () => boolean): Promise<void> {
    while (!done()) {
      if (this.es.readyState === EventSource.CLOSED) throw new Error(`closed for good (errors ${JSON.stringify(this.errors)}) before the wait was met`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  changes(): Got[] {
    return this.events.filter((e) => e.type === 'change');
  }

  close(): void {
    this.es.close();
  }
}

const FEED = { heartbeatMs: 100, pollMs: 10, maxStreamsPerKey: 2, retryMs: 50 };

let clock = Date.parse('2026-01-06T00:00:00.000Z');
/** Event times that only go forward: every event applies. */
const tick = (): string => new Date((clock += 60_000)).toISOString();

function setup(tt: Test, over: Partial<typeof FEED> & { isDraining?: () => boolean } = {}, app: Partial<AppOptions> = {}): Promise<{ db: Db; projector: Projector; api: Api; feed: (p?: string) => string }> {
  const { db, projector } = freshDb(tt);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  return startApi({ db, buildThreads: 0, changeFeed: { ...FEED, ...over }, ...app }).then((api) => {
    tt.teardown(() => api.close());
    return { db, projector, api, feed: (p = W.project) => `${api.base}/projects/${p}/changes` };
  });
}

let runN = 100;
/** One committed batch: a prompt run of the project (or a forum post) at the next event time. */
function commitRun(projector: Projector, project = W.project): string {
  const at = tick();
  const e = run({ n: (runN += 1), brand: 2 });
  e.occurred_at = at;
  (e.data as Record<string, unknown>).project_id = project;
  projector.applyBatch(asSource([e], `batch-${runN}`));
  return at;
}

/** What a client following the feed asks after an event: no-cache, a body at least as new as the event. */
async function versionOf(api: Api, path: string): Promise<{ version: string; asOf: string | undefined }> {
  const r = await request(`${api.base}${path}`, withKey(W.key, { 'cache-control': 'no-cache' }));
  return { version: String(r.headers['x-data-version']), asOf: r.headers['x-data-as-of'] as string | undefined };
}

t.test('after a change event, a request with Cache-Control: no-cache gets a body at least as new as the event', async (t) => {
  // A bound long enough that without no-cache every answer here could be the stale body.
  const { projector, api, feed } = await setup(t, {}, { maxStalenessMs: 60_000, buildThreads: 1 });
  const url = `${api.base}/projects/${W.project}/visibility`;
  const c = new Client(feed(), W.key);
  t.teardown(() => c.close());
  await c.until(() => c.events.some((e) => e.type === 'ready'));
  for (let i = 0; i < 5; i++) {
    t.equal((await request(url, withKey(W.key))).status, 200, 'cached');
    commitRun(projector);
    await c.until(() => c.changes().length > i);
    const event = c.changes()[i]!;
    const r = await request(url, withKey(W.key, { 'cache-control': 'no-cache' }));
    t.ok(Number(r.headers['x-data-version']) >= event.data.data_version, `event ${event.id}: X-Data-Version ${String(r.headers['x-data-version'])}`);
    t.equal(r.headers['cache-status'], undefined, 'not stale');
  }
  t.same(c.errors, [], 'no errors');
});

t.test('one change event per committed change, ids increasing, naming what changed', async (t) => {
  const { projector, api, feed } = await setup(t);
  const c = new Client(feed(), W.key);
  t.teardown(() => c.close());
  await c.until(() => c.events.length === 1);
  const ready = c.events[0]!;
  t.equal(ready.type, 'ready', 'a fresh stream starts with ready');
  t.equal(ready.id, (await versionOf(api, `/projects/${W.project}/visibility`)).version, 'ready names the current X-Data-Version');

  const times = [commitRun(projector)];
  await c.until(() => c.changes().length === 1);
  times.push(commitRun(projector), commitRun(projector));
  await c.until(() => c.changes().length === 3);
  const ids = c.changes().map((e) => Number(e.id));
  t.ok(ids[0]! > Number(ready.id) && ids[1]! > ids[0]! && ids[2]! > ids[1]!, `increasing ids ${ids.join(', ')}`);
  t.same(c.changes().map((e) => e.data.data_as_of), times, 'each says the newest event time applied');
  t.same(c.changes().map((e) => e.data.data_version), ids, 'data_version is the id');
  const last = await versionOf(api, `/projects/${W.project}/visibility`);
  t.equal(last.version, String(ids[2]), 'the last id is the X-Data-Version of the project responses');
  const runs = c.changes()[0]!.data.endpoints!;
  t.ok(runs.includes('visibility') && runs.includes('runs') && runs.includes('run-results'), 'a run changes the metrics and the runs');
  t.notOk(runs.includes('forum-leads') || runs.includes('terms') || runs.includes('projects'), 'not the forum, the terms or the project list');

  // Another project's commit is not this feed's; a forum post names the forum endpoints only.
  commitRun(projector, W.otherProject);
  const at = tick();
  projector.applyBatch(asSource([ev('forum_post.discovered', {
    id: id(1, '44444444'), project_id: W.project, platform: 'reddit', url: 'https://www.reddit.com/r/anvils/1', title: 'Anvils?',
    discovered_at: at, relevance: 0.9, intent: 'high', matched_terms: ['anvil'],
  }, at)], 'forum'));
  await c.until(() => c.changes().length === 4);
  t.same(c.changes()[3]!.data.endpoints!.sort(), ['forum-leads', 'forum-metrics', 'forum-opportunities'], 'a forum post: the three forum endpoints');
  t.equal(c.changes()[3]!.data.project_id, W.project, 'only this project\'s changes');
  t.same(c.errors, [], 'no errors');
});

t.test('Last-Event-ID resumes with exactly the missed changes; an id the log no longer covers gets reset', async (t) => {
  // Closed clients' streams are let go when their sockets close: room for them meanwhile.
  const { projector, api, feed } = await setup(t, { maxStreamsPerKey: 20 });
  const first = new Client(feed(), W.key);
  await first.until(() => first.events.length === 1); // ready: the stream is open
  commitRun(projector);
  await first.until(() => first.changes().length === 1);
  const seen = first.changes()[0]!.id;
  first.close();
  const missed = [commitRun(projector), commitRun(projector)];

  const resumed = new Client(feed(), W.key, seen);
  t.teardown(() => resumed.close());
  await resumed.until(() => resumed.changes().length === 2);
  t.same(resumed.events.map((e) => e.type), ['change', 'change'], 'no ready, no reset: just the missed changes');
  t.same(resumed.changes().map((e) => e.data.data_as_of), missed, 'the two missed commits');
  t.ok(Number(resumed.changes()[0]!.id) > Number(seen), 'after the id it resumed from');

  // The server ends every stream (as when draining): the client reconnects by itself with its
  // Last-Event-ID and misses nothing committed meanwhile, live or from the log.
  api.service.changes.close();
  const meanwhile = [commitRun(projector), commitRun(projector)];
  await resumed.until(() => resumed.changes().length === 4);
  t.same(resumed.events.map((e) => e.type), ['change', 'change', 'change', 'change'], 'reconnected without ready or reset');
  t.same(resumed.changes().slice(2).map((e) => e.data.data_as_of), meanwhile, 'each commit exactly once');
  const ids = resumed.changes().map((e) => Number(e.id));
  t.same(ids, [...ids].sort((a, b) => a - b), 'ids still increasing');

  for (const [bad, why] of [['0', 'older than the log'], ['99999', 'newer than the data'], ['abc', 'not a version']] as const) {
    const c = new Client(feed(), W.key, bad);
    await c.until(() => c.events.length === 1);
    c.close();
    t.equal(c.events[0]!.type, 'reset', `${why}: reset`);
    t.equal(c.events[0]!.id, String(ids[3]), `${why}: the reset names the current version`);
    t.ok(c.events[0]!.data.endpoints!.includes('visibility'), `${why}: refetch everything`);
  }
  const q = new Client(`${feed()}?last_event_id=${ids[2]}`, W.key);
  await q.until(() => q.events.length === 1);
  q.close();
  t.same(q.events.map((e) => [e.type, Number(e.id)]), [['change', ids[3]]], '?last_event_id= resumes too');
});

t.test('the same 401, 400 and 404 as every project route', async (t) => {
  const { api, feed } = await setup(t);
  const foreign = await request(feed(W.otherProject), withKey(W.key));
  t.equal(foreign.status, 404, 'another account\'s project: 404');
  t.same(foreign.json, { error: true, message: 'Not found' }, 'the 404 body');
  const unknown = await request(feed(id(77, 'bbbbbbbb')), withKey(W.key));
  t.same([unknown.status, unknown.json], [404, { error: true, message: 'Not found' }], 'an unknown project: the same 404');
  const badKey = await request(feed(), withKey('no-such-key'));
  t.same([badKey.status, badKey.json, badKey.headers['www-authenticate']], [401, { error: true, message: 'Invalid API key' }, 'ApiKey'], 'unknown key: 401');
  const noKey = await request(feed());
  t.equal(noKey.status, 401, 'no key: 401');
  const malformed = await request(`${api.base}/projects/not-a-uuid/changes`, withKey(W.key));
  t.equal(malformed.status, 400, 'a malformed project id: 400');
  t.match((malformed.json as { message: string }).message, /project_id/, 'naming project_id');
  const post = await request(feed(), { method: 'POST', headers: { 'x-api-key': W.key } });
  t.equal(post.status, 405, 'POST: 405');

  const es = new Client(feed(W.otherProject), W.key);
  await es.until(() => es.errors.length > 0);
  es.close();
  t.same([es.errors, es.events], [[404], []], 'an EventSource on a foreign project gets 404 and nothing else');
  const other = new Client(feed(W.otherProject), W.otherKey);
  await other.until(() => other.events.length === 1);
  other.close();
  t.equal(other.events[0]!.type, 'ready', 'its owner\'s key opens it');
});

t.test('at most maxStreamsPerKey open streams per key: 429 beyond', async (t) => {
  const { feed } = await setup(t);
  const a = new Client(feed(), W.key);
  const b = new Client(feed(), W.key);
  await a.until(() => a.events.length === 1);
  await b.until(() => b.events.length === 1);
  const over = await request(feed(), withKey(W.key));
  t.equal(over.status, 429, 'a third stream: 429');
  t.same(over.json, { error: true, message: 'Too many open change streams for this API key (at most 2); close one first' }, 'the JSON error body');
  const other = new Client(feed(W.otherProject), W.otherKey);
  await other.until(() => other.events.length === 1);
  t.equal(other.events[0]!.type, 'ready', 'another key is not affected');
  other.close();
  a.close();
  // The server notices the closed stream when its socket closes; retry until the slot is free.
  let c: Client;
  for (;;) {
    c = new Client(feed(), W.key);
    await c.until(() => c.events.length === 1 || c.errors.length > 0);
    if (c.events.length === 1) break;
    c.close();
  }
  t.equal(c.events[0]!.type, 'ready', 'a slot frees when a stream closes');
  c.close();
  b.close();
});

t.test('a revoked key or share ends the stream, and the reconnect is refused', async (t) => {
  const { projector, api, feed } = await setup(t);
  // The other account shares its project with W.account; W.key watches both.
  projector.applyBatch(asSource([ev('project.access_granted', { project_id: W.otherProject, account_id: W.account }, tick())], 'grant'));
  const own = new Client(feed(), W.key);
  const shared = new Client(feed(W.otherProject), W.key);
  await own.until(() => own.events.length === 1);
  await shared.until(() => shared.events.length === 1);

  projector.applyBatch(asSource([ev('project.access_revoked', { project_id: W.otherProject, account_id: W.account }, tick())], 'unshare'));
  await shared.until(() => shared.errors.includes(404));
  t.equal(shared.es.readyState, EventSource.CLOSED, 'the share revoked: stream ended, reconnect 404, closed for good');
  t.same(shared.events.map((e) => e.type), ['ready'], 'no event of the project after the share was revoked');

  projector.applyBatch(asSource([ev('api_key.revoked', { key_id: id(1, '11111111'), revoked_at: tick() }, tick())], 'revoke'));
  commitRun(projector); // a change the revoked key must not hear of
  await own.until(() => own.errors.includes(401));
  t.equal(own.es.readyState, EventSource.CLOSED, 'the key revoked: stream ended, reconnect 401, closed for good');
  t.same(own.changes(), [], 'no change event after the revocation');
  t.equal(api.service.changes.open, 0, 'no stream left open');
  const again = await request(feed(), withKey(W.key));
  t.equal(again.status, 401, 'a new request with the key: 401');
});

t.test('heartbeats, headers, HEAD, and streams end when the service drains', async (t) => {
  let draining = false;
  const { feed } = await setup(t, { isDraining: () => draining });
  const got = await new Promise<{ headers: http.IncomingHttpHeaders; text: string; ended: Promise<void> }>((resolve, reject) => {
    http.get(feed(), { headers: { 'x-api-key': W.key } }, (res) => {
      let text = '';
      const ended = new Promise<void>((done) => res.on('end', done));
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        // Two heartbeats: the stream stays alive with comment lines.
        if (text.split(': heartbeat\n\n').length === 3) resolve({ headers: res.headers, text, ended });
      });
    }).on('error', reject);
  });
  t.match(got.headers['content-type'], /^text\/event-stream/, 'text/event-stream');
  t.equal(got.headers['cache-control'], 'no-store', 'never cached');
  t.match(got.text, /^retry: 50\n\nid: \d+\nevent: ready\ndata: \{/, 'retry, then ready');
  draining = true;
  await got.ended;
  t.pass('the stream ended when the service began draining');

  const head = await request(feed(), { method: 'HEAD', headers: { 'x-api-key': W.key } });
  t.same([head.status, head.text], [200, ''], 'HEAD: the headers, no stream');
});

t.test('X-Data-As-Of: the newest event time applied to the project, on project and run group responses', async (t) => {
  const { db, projector } = freshDb(t);
  projector.applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  const api = await startApi({ db }); // with a build thread: the header crosses from it
  t.teardown(() => api.close());
  const newest = '2026-01-05T12:00:01.000Z'; // the run's occurred_at, as stored (UTC, milliseconds)
  for (const path of [`/projects/${W.project}`, `/projects/${W.project}/visibility`, `/projects/${W.project}/forum/leads`, `/runs/${W.group}`, `/runs/${W.group}/results`]) {
    t.equal((await versionOf(api, path)).asOf, newest, `${path}: ${newest}`);
  }
  t.equal((await versionOf(api, '/projects')).asOf, undefined, 'not on the account\'s project list');
  const first = await request(`${api.base}/projects/${W.project}/visibility`, withKey(W.key));
  const notModified = await request(`${api.base}/projects/${W.project}/visibility`, withKey(W.key, { 'if-none-match': String(first.headers.etag) }));
  t.same([notModified.status, notModified.headers['x-data-as-of']], [304, newest], 'on 304 too');

  const later = commitRun(projector);
  t.equal((await versionOf(api, `/projects/${W.project}/visibility`)).asOf, later, 'moves with a newer event');
  const old = run({ n: 555, brand: 1, day: '2026-01-02' });
  projector.applyBatch(asSource([old], 'late'));
  t.equal((await versionOf(api, `/projects/${W.project}/visibility`)).asOf, later, 'a late event with an older time does not move it back');
  const other = await request(`${api.base}/projects/${W.otherProject}`, withKey(W.otherKey));
  t.equal(other.headers['x-data-as-of'], '2026-01-01T00:00:00.000Z', 'per project');
});

t.test('a graceful stop (start().close(), as on SIGTERM) ends open streams instead of waiting for the drain deadline', async (t) => {
  const dir = tmpDir('changes-stop-');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'served.db');
  const db = openDb(file);
  new ProjectorClass(db).applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  db.close();
  // A drain deadline far beyond the test's timeout: close() returns only because the stream ended.
  const running = await start({ dbFile: file, port: 0, host: '127.0.0.1', opsPort: 0, drainMs: 3_600_000, logger: silentLogger });
  // (An object around the promise: resolving with a promise itself would wait for it.)
  const { ended } = await new Promise<{ ended: Promise<void> }>((resolve, reject) => {
    http.get(`${running.url}/projects/${W.project}/changes`, { headers: { 'x-api-key': W.key } }, (res) => {
      const ended = new Promise<void>((d) => res.on('end', d));
      res.once('data', () => resolve({ ended }));
      res.resume();
    }).on('error', reject);
  });
  await running.close();
  await ended;
  t.pass('closed, the stream ended');
});

t.test('the OpenAPI document: the change feed as text/event-stream, X-Data-As-Of on project operations', async (t) => {
  const { api } = await setup(t);
  type Op = { operationId: string; parameters?: Array<{ name: string; in: string }>; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> };
  const doc = (await request(`${api.base}/openapi.json`)).json as { paths: Record<string, { get: Op }> };
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const result = await new Validator().validate(doc as unknown as Parameters<InstanceType<typeof Validator>['validate']>[0]);
  t.same(result.errors ?? [], [], 'a valid OpenAPI 3.1 document');
  const feed = doc.paths['/projects/{project_id}/changes']!.get;
  t.equal(feed.operationId, 'changes');
  t.ok(feed.responses['200']!.content!['text/event-stream'], '200: text/event-stream');
  t.same(['401', '404', '429'].filter((s) => feed.responses[s]), ['401', '404', '429'], '401, 404 and 429 documented');
  t.ok(feed.parameters!.some((p) => p.name === 'project_id' && p.in === 'path') && feed.parameters!.some((p) => p.name === 'Last-Event-ID' && p.in === 'header'), 'project_id and Last-Event-ID');
  for (const [path, { get: op }] of Object.entries(doc.paths)) {
    if (!path.startsWith('/projects/') && !path.startsWith('/runs/')) continue;
    if (op.operationId === 'changes') continue;
    for (const status of ['200', '304']) t.ok(op.responses[status]?.headers?.['X-Data-As-Of'], `${path} ${status}: X-Data-As-Of`);
  }
  t.notOk(doc.paths['/projects']!.get.responses['200']!.headers!['X-Data-As-Of'], 'not on the account\'s project list');
});
