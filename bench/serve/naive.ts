// The "no read model" baseline: /visibility computed from the raw prompt runs on every request.
import { addDays } from '../../src/lib/time';
import type { Db } from '../../src/store';

interface Row { engine_id: string; prompt_id: string; brand_position: number | null; brand_sentiment: number | null; event: string; text: string; name: string }

export function naiveVisibility(db: Db, projectId: string, days: number): Record<string, unknown> {
  const end = db.prepare("SELECT max(day) FROM prompt_runs WHERE project_id = ? AND status = 'succeeded'").pluck().get(projectId) as string | null;
  if (!end) return { project_id: projectId, run_count: 0 };
  const rows = db.prepare(`SELECT r.engine_id, r.prompt_id, r.brand_position, r.brand_sentiment, r.event, p.text, e.name
    FROM prompt_runs r JOIN prompts p ON p.id = r.prompt_id AND p.deleted = 0 JOIN engines e ON e.id = r.engine_id
    WHERE r.project_id = ? AND r.status = 'succeeded' AND r.day BETWEEN ? AND ?`).all(projectId, addDays(end, -(days - 1)), end) as Row[];
  const sums = (filter: (r: Row) => boolean) => {
    let runs = 0, men = 0, pos = 0, rr = 0, sent = 0, sentN = 0;
    for (const r of rows) {
      if (!filter(r)) continue;
      runs += 1;
      if (r.brand_position !== null) { men += 1; pos += r.brand_position; rr += 1 / r.brand_position; }
      if (r.brand_sentiment !== null) { sent += r.brand_sentiment; sentN += 1; }
    }
    return { run_count: runs, mention_rate: runs ? men / runs : 0, average_rank: men ? pos / men : null, sentiment: sentN ? sent / sentN : null, score: runs ? (100 * rr) / runs : null };
  };
  const competitors = new Map<string, { name: string; runs: number }>();
  for (const r of rows) {
    const seen = new Set<string>();
    // A run keeps its event as received: its mentions are read from it, as a server with no read model would.
    const event = JSON.parse(r.event) as { data: { mentions: Array<{ competitor_id?: string | null; name: string }> } };
    for (const m of event.data.mentions) {
      if (!m.competitor_id || seen.has(m.competitor_id)) continue;
      seen.add(m.competitor_id);
      const c = competitors.get(m.competitor_id) ?? { name: m.name, runs: 0 };
      c.runs += 1;
      competitors.set(m.competitor_id, c);
    }
  }
  return {
    project_id: projectId, ...sums(() => true),
    prompt_breakdown: [...new Set(rows.map((r) => r.prompt_id))].sort().map((p) => ({ prompt_id: p, ...sums((r) => r.prompt_id === p) })),
    engine_breakdown: [...new Set(rows.map((r) => r.engine_id))].sort().map((e) => ({ engine_id: e, ...sums((r) => r.engine_id === e) })),
    top_competitors: [...competitors].map(([id, c]) => ({ competitor_id: id, name: c.name, mention_rate: c.runs / rows.length })),
  };
}
