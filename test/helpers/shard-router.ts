// deploy/haproxy-shards.cfg with deploy/shard-router.lua on loopback, in front of 2 shards of 2
// replicas: what test/e2e/shards.test.ts (real shards) and shard-router.test.ts (stubs) route through.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './http';
import { ROOT } from './paths';
import { onFreePorts, TAKEN } from './processes';
import { until } from './wait';

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));

export interface Replica { port: number; opsPort: number }

export interface ShardRouter {
  /** http://127.0.0.1:PORT */
  base: string;
  out(): string;
  stop(): void;
}

/**
 * Starts HAProxy with the committed config for `shards` (2 of 2 replicas each) and `partitions`;
 * resolves once it answers a project-less path (a shard's readiness included).
 */
export function startShardRouter(shards: Replica[][], partitions: number, readyPath = '/v1/public/openapi.json'): Promise<ShardRouter> {
  if (!HAPROXY) throw new Error('HAProxy is not installed');
  if (shards.length !== 2 || shards.some((s) => s.length !== 2)) throw new Error('deploy/haproxy-shards.cfg has 2 shards of 2 replicas');
  const env: NodeJS.ProcessEnv = { SHARD_LUA: path.join(ROOT, 'deploy', 'shard-router.lua'), SHARD_PARTITIONS: String(partitions), SHARD_COUNT: '2' };
  shards.forEach((replicas, k) => replicas.forEach((r, i) => {
    env[`S${k}R${i + 1}_API`] = `127.0.0.1:${r.port}`;
    env[`S${k}R${i + 1}_OPS`] = String(r.opsPort);
  }));
  return onFreePorts(1, async ([port]) => {
    const haproxy = spawn(HAPROXY, ['-db', '-f', path.join(ROOT, 'deploy', 'haproxy-shards.cfg')], {
      env: { ...process.env, ...env, HAPROXY_BIND: `127.0.0.1:${port}` }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    haproxy.stdout.on('data', (c: Buffer) => (out += c.toString()));
    haproxy.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = (): boolean => haproxy.exitCode !== null || haproxy.signalCode !== null;
    const stop = (): void => void (!exited() && haproxy.kill('SIGKILL'));
    const base = `http://127.0.0.1:${port}`;
    await until(async () => exited() || (await request(`${base}${readyPath}`).catch(() => null))?.status === 200, 15_000, 100);
    if (exited() && /Address already in use/.test(out)) return TAKEN;
    if (exited()) throw new Error(`HAProxy exited: ${out}`);
    return { base, out: () => out, stop };
  });
}
