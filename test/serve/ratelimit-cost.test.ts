// What an answer costs in the per-key rate limit (ratelimit.ts extraCost), over real HTTP with the
// limiter's clock stopped, so every figure is exact: an answer costs one request plus one per
// BYTES_PER_REQUEST of its JSON; HTTP and MCP draw on the same bucket; a JSON-RPC batch is charged
// per call and per byte, and one answer carries at most mcpAnswerMaxBytes (the rest of the batch
// answers a tool error saying so). The charge of a build by its time is in fair-builds.test.ts.
import t from 'tap';
import { BYTES_PER_REQUEST, extraCost, RateLimiter } from '../../src/serve/http/ratelimit';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey, type Reply } from '../helpers/http';
import { checkAnswer, postMcp, toolCall } from '../helpers/mcp';

const rOf = (reply: { headers: Record<string, string | string[] | undefined> }): number => {
  const m = /;r=(\d+);/.exec(String(reply.headers.ratelimit));
  if (!m) throw new Error(`no RateLimit field: ${String(reply.headers.ratelimit)}`);
  return Number(m[1]);
};

t.test('the cost of an answer, and debt', (t) => {
  t.equal(extraCost(0, 1000), 0, 'a small cached body: no more than its one request');
  t.equal(extraCost(49.9, BYTES_PER_REQUEST - 1), 0, "a quick small build: none either");
  t.equal(extraCost(1500, 3 * BYTES_PER_REQUEST), 30 + 3, "1.5 s of build and 3 units of bytes");
  const now = 0;
  const l = new RateLimiter(10, () => now);
  t.equal(l.debit('k', 500), '"per-key";r=0;t=4', 'debt is bounded by one burst: r=0, full again after two windows');
  t.equal(l.take('k'), null, 'a key in debt is refused');
  t.end();
});

t.test('an answer is charged by its bytes; HTTP and MCP share the budget; an MCP answer has a cap', async (t) => {
  const { db } = await demoDb();
  const key = activeKeys[0]!.key;
  // Sized after one body of the demo: room for two calls' results (each carries its body twice).
  const probe = await startApi({ db, buildThreads: 0 });
  const project = ((await request(`${probe.base}/projects`, withKey(key))).json as Array<{ id: string }>)[0]!.id;
  const bigPath = `/projects/${project}/mentions?limit=1000&start_date=2026-10-01&end_date=2026-11-15`;
  const big = await request(probe.base + bigPath, withKey(key));
  await probe.close();
  t.equal(big.status, 200);
  const bodyBytes = big.raw.length;
  t.ok(bodyBytes > BYTES_PER_REQUEST, `a body over one unit of bytes (${bodyBytes} bytes)`);

  const api = await startApi({ db, buildThreads: 0, rateLimit: 1000, rateLimitClock: () => 0, mcpAnswerMaxBytes: Math.floor(2.5 * 2 * bodyBytes) });
  t.teardown(async () => {
    await api.close();
    db.close();
  });
  const origin = api.base.replace(/\/v1\/public$/, '');
  const get = (p: string): Promise<Reply> => request(api.base + p, withKey(key));
  const first = await get(bigPath); // built: its cost includes the build, whatever it took
  const hit = await get(bigPath);
  t.equal(hit.raw.length, bodyBytes, 'the same body, uncompressed');
  t.equal(rOf(first) - rOf(hit), 1 + Math.floor(bodyBytes / BYTES_PER_REQUEST), 'a hit costs one request and one per unit of its bytes');

  // Five calls of the same tool with the same arguments: one cached body, answered twice per result.
  const args = { project_id: project, limit: 1000, start_date: '2026-10-01', end_date: '2026-11-15' };
  const batch = Array.from({ length: 5 }, (_, i) => toolCall(i + 1, 'mentions', args));
  const before = rOf(await get(`/projects/${project}`));
  const answer = await postMcp(origin, key, JSON.stringify(batch));
  t.equal(answer.status, 200);
  const answers = checkAnswer(t, answer, 'the batch');
  t.equal(answers.length, 5, 'every call answered');
  const refused = answers.filter((a) => a.result?.isError);
  t.equal(answers.length - refused.length, 2, 'two results fit in the cap');
  for (const r of refused) {
    t.match(r.result?.structuredContent, { status: 413, code: 'payload_too_large', message: /^This answer reached its cap of [\d.]+ MiB: this call was not answered; send it in another request$/ });
  }
  t.ok(answer.text.length < 2.5 * 2 * bodyBytes + 64 * 1024, `the answer stayed near its cap (${answer.text.length} bytes)`);
  const after = rOf(await get(`/projects/${project}`));
  // The POST's five messages, and each answered call's bytes (twice its body); the GET after costs one.
  const perCall = Math.floor((2 * bodyBytes) / BYTES_PER_REQUEST);
  t.equal(before - after, 5 + 2 * perCall + 1, 'the batch was charged to the key\'s HTTP budget: per call and per byte');
});
