// GET /projects/:project_id/warm-leads — community threads AI answers keep citing: places worth joining.
import type { Endpoint } from '../endpoint';
import type { WarmLeads } from '../bodies.gen';
import { citedUrls } from './citations';
import { communityPlatform } from '../domains';

/** A page cited once may be noise; twice in the window means engines keep going back to it. */
const MIN_CITATIONS = 2;

export const endpoint: Endpoint = {
  name: 'warm-leads',
  path: '/projects/:project_id/warm-leads',
  summary: 'Warm leads: community and discussion pages cited at least twice in the current window',
  scope: 'project',
  params: ['start_date', 'end_date', 'country', 'persona', 'model', 'segment_ids'],
  schema: 'warm-leads',
  dependsOn: ['runs', 'setup', 'engines', 'project'],
  build(store, args): WarmLeads {
    const out: WarmLeads = [];
    // citedUrls is already most cited first, then by URL: the order this list wants.
    // Only the community platforms' URLs are made: a year cites ~20k others for nothing here.
    for (const u of citedUrls(store, args, null, (domain) => communityPlatform(domain) !== null)) {
      const platform = communityPlatform(u.domain);
      if (!platform || u.citation_count < MIN_CITATIONS) continue;
      out.push({
        url: u.url, domain: u.domain, platform, title: u.title, citation_count: u.citation_count,
        prompt_count: u.prompt_count, engine_ids: u.engine_ids, last_cited_at: u.last_cited_at,
      });
    }
    return out;
  },
};
