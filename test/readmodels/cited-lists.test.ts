// Referrers, warm leads and a page of citations over ranges are what the whole citations list says of
// the same URLs, over real HTTP on the demo data: referrers read each URL's runs, domain and engines
// without its prompts, times and title, warm leads make only the community platforms' URLs and a page
// of citations only its own, from the same runs (the ragged days) and roll-ups (weeks, months). So
// every referrer is the sum of its domain's cited URLs, every warm lead is a community URL of the
// citations list cited at least twice, field for field, and a page is the list's first URLs.
import t from 'tap';
import { addDays } from '../../src/lib/time';
import { communityPlatform } from '../../src/readmodels/domains';
import { rangePieces } from '../../src/readmodels/range-pieces';
import { activeKeys, demoDb } from '../helpers/demo';
import { request, startApi, withKey } from '../helpers/http';

interface Citation { url: string; domain: string; title: string | null; citation_count: number; prompt_count: number; engine_ids: string[]; last_cited_at: string }
interface Referrer { domain: string; citation_count: number; url_count: number; share: number; engine_ids: string[] }
interface WarmLead { url: string; domain: string; platform: string; title: string | null; citation_count: number; prompt_count: number; engine_ids: string[]; last_cited_at: string }

t.test('referrers and warm leads agree with citations over ranges, filtered or not', async (t) => {
  const { db } = await demoDb();
  const api = await startApi({ db, buildThreads: 0 });
  t.teardown(() => api.close().then(() => db.close()));
  const key = activeKeys[0]!.key;
  const get = async <T>(path: string): Promise<T> => {
    const r = await request(api.base + path, withKey(key));
    t.equal(r.status, 200, path);
    return r.json as T;
  };
  const project = (await get<Array<{ id: string }>>('/projects'))[0]!.id;
  const base = `/projects/${project}`;
  const end = (await get<{ window_end: string }>(`${base}/visibility`)).window_end;
  const segment = (await get<Array<{ id: string }>>(`${base}/segments`))[0]?.id;
  t.ok(segment, 'the demo project has a segment');
  const year = `start_date=${addDays(end, -364)}&end_date=${end}`;
  // The year is months, weeks and single days: both the roll-ups and the runs are read.
  t.ok(new Set(rangePieces(addDays(end, -364), end, 'total').map((p) => p.grain)).size === 3, 'the year has month, week and day pieces');
  const queries = ['', year, `start_date=${addDays(end, -89)}&end_date=${end}`, `${year}&segment_ids=${segment!}`];
  let leads = 0;
  for (const q of queries) {
    const cited = await get<Citation[]>(`${base}/citations?limit=1000&${q}`);
    t.ok(cited.length > 0 && cited.length < 1000, `${q || 'the default window'}: ${cited.length} URLs, the whole list`);
    // A page makes only its URLs whole: the same as the whole list's first, ties at its edge included.
    for (const limit of [1, 5, 37]) t.strictSame(await get<Citation[]>(`${base}/citations?limit=${limit}&${q}`), cited.slice(0, limit), `${q || 'the default window'}: limit=${limit} is the list's first ${limit}`);

    const byDomain = new Map<string, { domain: string; citation_count: number; url_count: number; engines: Set<string> }>();
    for (const c of cited) {
      let d = byDomain.get(c.domain);
      if (!d) byDomain.set(c.domain, (d = { domain: c.domain, citation_count: 0, url_count: 0, engines: new Set() }));
      d.citation_count += c.citation_count;
      d.url_count += 1;
      for (const e of c.engine_ids) d.engines.add(e);
    }
    const total = cited.reduce((n, c) => n + c.citation_count, 0);
    const referrers = await get<Referrer[]>(`${base}/referrers?${q}`);
    t.strictSame(referrers.map((r) => [r.domain, r.citation_count, r.url_count, r.engine_ids, r.share]),
      [...byDomain.values()].sort((a, b) => b.citation_count - a.citation_count || (a.domain < b.domain ? -1 : 1))
        .map((d) => [d.domain, d.citation_count, d.url_count, [...d.engines].sort(), d.citation_count / total]),
      `${q || 'the default window'}: referrers are citations by domain`);

    const warm = await get<WarmLead[]>(`${base}/warm-leads?${q}`);
    leads += warm.length;
    t.strictSame(warm, cited.filter((c) => c.citation_count >= 2 && communityPlatform(c.domain) !== null).map((c) => ({
      url: c.url, domain: c.domain, platform: communityPlatform(c.domain), title: c.title, citation_count: c.citation_count,
      prompt_count: c.prompt_count, engine_ids: c.engine_ids, last_cited_at: c.last_cited_at,
    })), `${q || 'the default window'}: warm leads are citations' community URLs cited twice or more`);
  }
  t.ok(leads > 0, 'the demo data cites community threads');
});
