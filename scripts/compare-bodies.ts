// Byte identity of two running services over HTTP: every GET path the first one's OpenAPI document
// lists (the endpoints; not the document itself, /methodology or an event stream), for every project
// and run group each key sees, asked with no parameters and with each parameter the path declares
// (a range across a month end, each end alone, interval week/month, one and two engines, an entity
// type, a small limit with its pages followed by the Link header), all of them together, and with a
// revoked key. Each pair of answers must have the same status, body bytes, ETag and Link. Other
// headers that differ are counted by name (e.g. Metric-Definitions-Version, Last-Modified): reported,
// not failed.
//
// Used to check that a release keeps v1/v1.1 bodies: serve the same event log with the older build
// and this one (the same --cursor-secret, so page cursors match), then
//
//   npx tsx scripts/compare-bodies.ts --a http://127.0.0.1:18501/v1/public --b http://127.0.0.1:18502/v1/public \
//     --key KEY [--key KEY ...] [--revoked KEY] [--start 2026-10-20 --end 2026-11-10]
//
// Exits 1 when any pair differs (the first differences are printed).
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    key: { type: 'string', multiple: true, default: [] },
    revoked: { type: 'string' },
    start: { type: 'string', default: '2026-10-20' },
    end: { type: 'string', default: '2026-11-10' },
    pages: { type: 'string', default: '4' },
  },
});
if (!args.a || !args.b || args.key.length === 0) {
  console.error('usage: compare-bodies.ts --a BASE_URL --b BASE_URL --key KEY [--key KEY ...] [--revoked KEY] [--start D --end D] [--pages N]');
  process.exit(2);
}
const A = args.a.replace(/\/$/, '');
const B = args.b.replace(/\/$/, '');
const PAGES = Number(args.pages);
/** Headers that differ between two processes for reasons other than the body. */
const VOLATILE = new Set(['date', 'x-request-id', 'connection', 'keep-alive']);

type Query = Record<string, string | string[]>;
interface Answer { status: number; body: Buffer; headers: Map<string, string> }

async function get(base: string, path: string, key: string): Promise<Answer> {
  const res = await fetch(base + path, { headers: { 'X-API-Key': key } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: new Map(res.headers) };
}

function withQuery(path: string, q: Query): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) for (const one of Array.isArray(v) ? v : [v]) s.append(k, one);
  return s.size > 0 ? `${path}?${s.toString()}` : path;
}

/** Each GET path of the document and the query parameters it declares (parameters by $ref too). */
async function documented(): Promise<Map<string, Set<string>>> {
  const doc = await (await fetch(`${A}/openapi.json`)).json() as {
    paths: Record<string, { get?: { parameters?: Array<{ $ref?: string; in?: string; name?: string }>; responses?: Record<string, { content?: Record<string, unknown> }> } }>;
    components?: { parameters?: Record<string, { in?: string; name?: string }> };
  };
  const out = new Map<string, Set<string>>();
  for (const [p, item] of Object.entries(doc.paths)) {
    const op = item.get;
    if (!op || p === '/openapi.json' || p === '/methodology') continue;
    if (Object.keys(op.responses?.['200']?.content ?? {}).includes('text/event-stream')) continue;
    const names = (op.parameters ?? []).map((x) => (x.$ref ? doc.components?.parameters?.[x.$ref.split('/').pop()!] : x))
      .filter((x) => x?.in === 'query').map((x) => x!.name!);
    out.set(p, new Set(names));
  }
  return out;
}

/** The queries a path is asked with: none, each declared parameter's values alone, and all together. */
function variants(declared: Set<string>, engines: string[]): Query[] {
  const range = { start_date: args.start!, end_date: args.end! };
  const out: Query[] = [{}];
  const all: Query = {};
  if (declared.has('start_date')) {
    out.push(range, { start_date: args.start! }, { end_date: args.end! });
    Object.assign(all, range);
  }
  if (declared.has('interval')) for (const interval of ['week', 'month']) out.push({ interval }, { interval, ...range });
  if (declared.has('interval')) all.interval = 'week';
  if (declared.has('engine_ids') && engines.length > 0) {
    out.push({ engine_ids: [engines[0]!] }, { engine_ids: engines.slice(0, 2) });
    all.engine_ids = engines.slice(0, 2);
  }
  if (declared.has('entity_type')) {
    out.push({ entity_type: 'competitor' }, { entity_type: 'brand' });
    all.entity_type = 'competitor';
  }
  if (declared.has('limit')) {
    out.push({ limit: '5' });
    all.limit = '5';
  }
  if (Object.keys(all).length > 1) out.push(all);
  return out;
}

let compared = 0;
const differences: string[] = [];
const otherHeaders = new Map<string, number>();

async function compare(path: string, key: string, label: string): Promise<Answer> {
  const [a, b] = await Promise.all([get(A, path, key), get(B, path, key)]);
  compared += 1;
  const what: string[] = [];
  if (a.status !== b.status) what.push(`status ${a.status} vs ${b.status}`);
  if (!a.body.equals(b.body)) what.push(`body (${a.body.length} vs ${b.body.length} bytes)`);
  if (a.headers.get('etag') !== b.headers.get('etag')) what.push(`ETag ${a.headers.get('etag')} vs ${b.headers.get('etag')}`);
  if (a.headers.get('link') !== b.headers.get('link')) what.push('Link');
  if (what.length > 0) differences.push(`${label} GET ${path}: ${what.join(', ')}`);
  for (const name of new Set([...a.headers.keys(), ...b.headers.keys()])) {
    if (VOLATILE.has(name) || name === 'etag' || name === 'link' || a.headers.get(name) === b.headers.get(name)) continue;
    otherHeaders.set(name, (otherHeaders.get(name) ?? 0) + 1);
  }
  return a;
}

/** Asks a query, then follows rel="next" (as the first service gives it) for up to PAGES pages. */
async function walk(path: string, key: string, label: string): Promise<void> {
  let next: string | null = path;
  for (let page = 0; next !== null && page < PAGES; page++) {
    const a = await compare(next, key, label);
    const link = /<([^>]+)>;\s*rel="next"/.exec(a.headers.get('link') ?? '');
    const url = link ? new URL(link[1]!, `${A}/`) : null;
    next = url ? url.pathname.slice(new URL(A).pathname.length) + url.search : null;
  }
}

async function main(): Promise<void> {
  const paths = await documented();
  console.log(`${paths.size} paths documented by ${A}`);
  const requestsBy = new Map<string, number>();
  for (const [i, key] of args.key.entries()) {
    const label = `key ${i + 1}`;
    const projects = JSON.parse((await compare('/projects', key, label)).body.toString()) as Array<{ id: string }>;
    for (const { id } of projects) {
      const engines = (JSON.parse((await get(A, `/projects/${id}/engines`, key)).body.toString()) as Array<{ id: string }>).map((e) => e.id);
      const groups = (JSON.parse((await get(A, `/projects/${id}/runs`, key)).body.toString()) as Array<{ id: string }>).map((g) => g.id);
      for (const [p, declared] of paths) {
        if (p === '/projects') continue;
        const ids = p.includes('{run_group_id}') ? groups : [id];
        for (const one of ids) {
          const concrete = p.replace('{project_id}', id).replace('{run_group_id}', one);
          const before = compared;
          for (const q of variants(declared, engines)) await walk(withQuery(concrete, q), key, label);
          requestsBy.set(p, (requestsBy.get(p) ?? 0) + compared - before);
        }
      }
    }
  }
  if (args.revoked) {
    const projects = JSON.parse((await get(A, '/projects', args.key[0]!)).body.toString()) as Array<{ id: string }>;
    for (const p of paths.keys()) await compare(p.replace('{project_id}', projects[0]!.id).replace('{run_group_id}', projects[0]!.id), args.revoked, 'revoked key');
  }
  for (const [p, n] of requestsBy) console.log(`  ${String(n).padStart(5)}  ${p}`);
  console.log(`${compared} requests compared (status, body bytes, ETag, Link): ${differences.length} differ`);
  for (const d of differences.slice(0, 40)) console.log(`  ${d}`);
  if (otherHeaders.size > 0) console.log(`other headers that differ (not compared): ${[...otherHeaders].map(([h, n]) => `${h} (${n})`).join(', ')}`);
  process.exitCode = differences.length > 0 ? 1 : 0;
}

void main();
