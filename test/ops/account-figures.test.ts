// What operators see of fair sharing: /metrics has per-account build time, builds queued and
// running, refusals, cache bytes and 429s, labelled by account id (never a key); /cache (and so
// `cache-stats`) has the build queue, the fair share of the cache and each account's part.
import path from 'node:path';
import t from 'tap';
import { formatCacheStats } from '../../src/cli/cache-stats-command';
import { start } from '../../src/index';
import { openDb, Projector } from '../../src/store';
import { asSource, run, W, world } from '../helpers/events';
import { capturedLogger } from '../helpers/log';
import { request, withKey } from '../helpers/http';

t.test('per-account figures on /metrics and /cache, by account id', async (t) => {
  const file = path.join(t.testdir(), 'accounts.db');
  const db = openDb(file);
  new Projector(db).applyBatch(asSource([...world(), run({ n: 1, brand: 1 })]));
  db.close();
  const { logger } = capturedLogger();
  // A rate of 1 a second (a burst of 2): of four requests at once, two pass and two are 429s (a
  // request is charged as it arrives; what a build cost beyond that, once it is known).
  const running = await start({ dbFile: file, port: 0, opsPort: 0, host: '127.0.0.1', buildThreads: 1, rateLimit: 1, logger });
  t.teardown(() => running.close());
  const statuses = (await Promise.all([1, 2, 3, 4].map((i) => request(`${running.url}/projects/${W.project}/visibility?start_date=2026-01-0${i}&end_date=2026-01-20`, withKey(W.key))))).map((r) => r.status);
  const built = statuses.filter((s) => s === 200).length;
  t.ok(built >= 1 && statuses.filter((s) => s === 429).length >= 1 && built + statuses.filter((s) => s === 429).length === 4, `200s and 429s: ${statuses.join(' ')}`);

  const metrics = await (await fetch(`${running.opsUrl}/metrics`)).text();
  const series = (name: string): number => Number(new RegExp(`^${name}\\{account="${W.account}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  t.equal(series('visibility_account_builds'), built, 'builds');
  t.ok(series('visibility_account_build_seconds') > 0, 'build time');
  t.equal(series('visibility_account_builds_queued'), 0, 'queue depth');
  t.equal(series('visibility_account_builds_running'), 0, 'running');
  t.ok(series('visibility_account_cache_bytes') > 0, 'cache bytes');
  t.equal(series('visibility_account_throttled'), 4 - built, 'throttled requests');
  t.match(metrics, /^visibility_builds_queued 0$/m, 'the queue, all accounts');
  t.match(metrics, /^visibility_cache_fair_share_bytes \d+/m, 'the fair share');
  t.notMatch(metrics, new RegExp(W.key), 'no key on /metrics');
  t.notMatch(metrics, new RegExp(W.otherAccount), 'an account with nothing is not listed');

  const figures = (await (await fetch(`${running.opsUrl}/cache`)).json()) as Parameters<typeof formatCacheStats>[0] & { accounts: Record<string, { builds: number; throttled: number }> };
  t.match(figures.accounts[W.account], { builds: built, throttled: 4 - built, queued: 0, running: 0, refused: 0 }, '/cache: the account\'s part');
  t.equal(typeof figures.fair_share_bytes, 'number');
  const printed = formatCacheStats(figures);
  t.match(printed, /builds queued 0 {3}fair share of the cache [\d.]+ MiB per account/, 'cache-stats: the queue and the share');
  t.match(printed, new RegExp(`^${W.account} +0 +0 +${built} +[\\d.]+ +0 +${4 - built} +[\\d.]+ MiB +[\\d.]+%$`, 'm'), 'cache-stats: a line per account');
});
