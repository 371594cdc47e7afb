import { bearer } from '../ops/ops-access';
import { boolFlag, stringFlag, UsageError, type Command, type FlagTable, type Parsed } from './flags';

interface RouteFigures { hits: number; misses: number; builds: number; hit_ratio: number | null }
interface AccountFigures { queued: number; running: number; builds: number; build_ms: number; refused: number; cache_bytes: number; throttled: number }
interface CacheFigures {
  entries: number; bytes: number; max_bytes: number; hits: number; misses: number; builds: number;
  hit_ratio: number | null; evictions: number; resolutions_bytes?: number; routes: Record<string, RouteFigures>;
  /** Fair sharing (absent from an older service): the build queue and each account's part. */
  builds_queued?: number; fair_share_bytes?: number; accounts?: Record<string, AccountFigures>;
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const pct = (r: number | null): string => (r === null ? '-' : `${(100 * r).toFixed(1)}%`);

export function formatCacheStats(c: CacheFigures): string {
  const lines = [
    `entries ${c.entries}   bytes ${mib(c.bytes)} of ${mib(c.max_bytes)} (${pct(c.max_bytes ? c.bytes / c.max_bytes : null)})   evictions ${c.evictions}`,
    `hits ${c.hits}   misses ${c.misses}   builds ${c.builds}   hit ratio ${pct(c.hit_ratio)}   resolutions remembered ${mib(c.resolutions_bytes ?? 0)}`,
    '',
    `${'route'.padEnd(24)}${'hits'.padStart(10)}${'misses'.padStart(10)}${'builds'.padStart(10)}${'hit ratio'.padStart(11)}`,
  ];
  for (const [route, r] of Object.entries(c.routes)) {
    lines.push(`${route.padEnd(24)}${String(r.hits).padStart(10)}${String(r.misses).padStart(10)}${String(r.builds).padStart(10)}${pct(r.hit_ratio).padStart(11)}`);
  }
  if (c.accounts !== undefined) {
    const share = c.fair_share_bytes ?? 0;
    lines.push('', `builds queued ${c.builds_queued ?? 0}   fair share of the cache ${mib(share)} per account`, '');
    lines.push(`${'account'.padEnd(38)}${'queued'.padStart(8)}${'running'.padStart(8)}${'builds'.padStart(8)}${'build s'.padStart(9)}${'refused'.padStart(8)}${'429s'.padStart(7)}${'cache'.padStart(11)}${'share'.padStart(8)}`);
    for (const [account, a] of Object.entries(c.accounts)) {
      lines.push(`${account.padEnd(38)}${String(a.queued).padStart(8)}${String(a.running).padStart(8)}${String(a.builds).padStart(8)}${(a.build_ms / 1000).toFixed(1).padStart(9)}`
        + `${String(a.refused).padStart(8)}${String(a.throttled).padStart(7)}${mib(a.cache_bytes).padStart(11)}${pct(share ? a.cache_bytes / share : null).padStart(8)}`);
    }
  }
  return lines.join('\n');
}

const FLAGS = {
  'ops-url': { type: 'string', value: 'URL', env: 'OPS_URL', shows: 'http://127.0.0.1:$OPS_PORT (9464 when unset)', help: "the service's ops port" },
  'ops-token': { type: 'string', value: 'T', env: 'OPS_TOKEN', help: 'the ops token, when the service has one' },
  json: { type: 'boolean', help: 'print the figures as JSON, for a machine' },
} satisfies FlagTable;

/** Prints what the ops /cache endpoint shows, for a person (or --json for a machine). */
async function cacheStatsCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const token = stringFlag(p, 'ops-token');
  const base = stringFlag(p, 'ops-url') ?? `http://127.0.0.1:${process.env.OPS_PORT ?? 9464}`;
  let res: Response;
  try {
    res = await fetch(new URL('/cache', base), { signal: AbortSignal.timeout(5000), headers: token ? bearer(token) : {} });
  } catch (e) {
    throw new UsageError(`cannot reach the ops endpoint at ${base}: ${(e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`);
  }
  if (res.status === 401) throw new UsageError(`${base}/cache answered 401: ${token ? 'the ops token is wrong' : 'it needs the ops token (--ops-token or OPS_TOKEN)'}`);
  if (!res.ok) throw new UsageError(`${base}/cache answered ${res.status}`);
  const figures = (await res.json()) as CacheFigures;
  console.log(boolFlag(p, 'json') ? JSON.stringify(figures, null, 2) : formatCacheStats(figures));
  return 0;
}

export const command: Command<typeof FLAGS> = { synopsis: '[flags]', flags: FLAGS, run: cacheStatsCommand };
