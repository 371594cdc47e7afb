// GET /projects/:project_id/referrers — the domains AI answers cite, over the current window.
import type { Endpoint } from '../endpoint';
import type { Referrers } from '../bodies.gen';
import { citedTallies } from './citations';
import { compareStrings, type CitedTally } from '../store';
import { competitorDomains, matchesAny, ownDomains } from '../domains';

interface DomainAcc {
  domain: string;
  citation_count: number;
  url_count: number;
  engines: Set<string>;
}

/**
 * Per domain, the sum of its URLs' citation counts: a run citing two pages of one domain counts twice,
 * exactly as the URL aggregates are mergeable (no per-run domain sets are kept). So shares add up to 1.
 */
function byDomain(urls: Iterable<CitedTally>): DomainAcc[] {
  const out = new Map<string, DomainAcc>();
  for (const u of urls) {
    let d = out.get(u.domain);
    if (!d) out.set(u.domain, (d = { domain: u.domain, citation_count: 0, url_count: 0, engines: new Set() }));
    d.citation_count += u.runs;
    d.url_count += 1;
    for (const e of u.engines) d.engines.add(e);
  }
  return [...out.values()].sort((a, b) => b.citation_count - a.citation_count || compareStrings(a.domain, b.domain));
}

export const endpoint: Endpoint = {
  name: 'referrers',
  path: '/projects/:project_id/referrers',
  summary: 'Referring domains: cited domains over the current window with their share of all citations',
  scope: 'project',
  params: ['start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids'],
  schema: 'referrers',
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): Referrers {
    const domains = byDomain(citedTallies(store, args).values());
    const total = domains.reduce((n, d) => n + d.citation_count, 0);
    const own = ownDomains(store, args.projectId);
    const rivals = competitorDomains(store, args.projectId);
    return domains.map((d) => ({
      domain: d.domain, citation_count: d.citation_count, url_count: d.url_count,
      share: total === 0 ? 0 : d.citation_count / total, engine_ids: [...d.engines].sort(),
      is_own_domain: matchesAny(d.domain, own), is_competitor_domain: matchesAny(d.domain, rivals),
    }));
  },
};
