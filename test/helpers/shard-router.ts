// The sharded fleet's router on loopback: HAProxy with deploy/haproxy-shards.cfg (2 shards of 2
// replicas) or scripts/haproxy-shards.sh's config for another shape, and deploy/shard-router.lua, in
// front of the given replicas. What test/e2e/shard-router.test.ts (stub shards) and the sharded
// fleet's end-to-end test route through.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from './db';
import { request } from './http';
import { ROOT } from './paths';
import { onFreePorts, TAKEN } from './processes';
import { until } from './wait';

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => fs.existsSync(p));
export const SHARD_LUA = path.join(ROOT, 'deploy', 'shard-router.lua');
export const SHARDS_CFG = path.join(ROOT, 'deploy', 'haproxy-shards.cfg');
export const SHARDS_CFG_SCRIPT = path.join(ROOT, 'scripts', 'haproxy-shards.sh');

/** A replica as the router sees it: its API port and its ops port (/readyz), both on 127.0.0.1. */
export interface RouterReplica { port: number; opsPort: number }

export interface ShardRouterOptions {
  /** Shard k's replicas at index k; every shard has the same number of replicas. */
  shards: Array<{ replicas: RouterReplica[] }>;
  /** Partitions of the events topic (SHARD_PARTITIONS). */
  partitions: number;
  /** The HAProxy binary; by default Debian's. */
  haproxyBin?: string;
  /** Resolves once the router answers this path with a 200 (default: the OpenAPI document, from any shard). */
  readyPath?: string;
  /** More environment for HAProxy, over what is derived from the options (e.g. a SHARD_COUNT that disagrees). */
  env?: NodeJS.ProcessEnv;
}

export interface ShardRouter {
  /** http://127.0.0.1:PORT (the API is under /v1/public, MCP at /mcp) */
  base: string;
  /** What HAProxy wrote so far. */
  out(): string;
  /** SIGTERM; resolves once HAProxy has exited. */
  stop(): Promise<void>;
}

/** The config text for `shards` x `replicas`, as scripts/haproxy-shards.sh writes it. */
export function shardRouterConfig(shards: number, replicas: number): string {
  return execFileSync('bash', [SHARDS_CFG_SCRIPT, String(shards), String(replicas)], { encoding: 'utf8' });
}

/**
 * Starts HAProxy as the router of `shards` on a free loopback port; resolves once it answers
 * `readyPath` with a 200. Rejects with HAProxy's own words when it refuses to start.
 */
export function startShardRouter(opts: ShardRouterOptions): Promise<ShardRouter> {
  const bin = opts.haproxyBin ?? HAPROXY;
  if (!bin) throw new Error('HAProxy is not installed');
  const n = opts.shards.length;
  const r = opts.shards[0]?.replicas.length ?? 0;
  if (n === 0 || r === 0 || opts.shards.some((s) => s.replicas.length !== r)) throw new Error('the router needs at least one shard, each with the same number (at least one) of replicas');
  // The committed file for its own shape, so the tests run exactly what operators deploy.
  let cfg = SHARDS_CFG;
  if (n !== 2 || r !== 2) {
    cfg = path.join(tmpDir('shard-router-'), `haproxy-shards-${n}x${r}.cfg`);
    fs.writeFileSync(cfg, shardRouterConfig(n, r));
  }
  const env: NodeJS.ProcessEnv = { SHARD_LUA, SHARD_PARTITIONS: String(opts.partitions), SHARD_COUNT: String(n) };
  opts.shards.forEach((s, k) => s.replicas.forEach((replica, i) => {
    env[`S${k}R${i + 1}_API`] = `127.0.0.1:${replica.port}`;
    env[`S${k}R${i + 1}_OPS`] = String(replica.opsPort);
  }));
  const readyPath = opts.readyPath ?? '/v1/public/openapi.json';
  return onFreePorts(1, async ([port]) => {
    const haproxy = spawn(bin, ['-db', '-f', cfg], { env: { ...process.env, ...env, HAPROXY_BIND: `127.0.0.1:${port}`, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    haproxy.stdout.on('data', (c: Buffer) => (out += c.toString()));
    haproxy.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const gone = new Promise<void>((resolve) => haproxy.once('exit', () => resolve()));
    const exited = (): boolean => haproxy.exitCode !== null || haproxy.signalCode !== null;
    const stop = async (): Promise<void> => {
      if (!exited()) haproxy.kill('SIGTERM');
      await gone;
    };
    const base = `http://127.0.0.1:${port}`;
    const up = await until(async () => exited() || (await request(`${base}${readyPath}`)).status === 200, 15_000, 50);
    if (exited() && /Address already in use|cannot bind/.test(out)) return TAKEN;
    if (exited()) throw new Error(`HAProxy exited: ${out}`);
    if (!up) {
      await stop();
      throw new Error(`the router did not answer ${readyPath} with a 200 within 15 s: ${out}`);
    }
    return { base, out: () => out, stop };
  });
}
