// A closed-loop read load with wrk (the Debian package `wrk`), for benches where the load generator
// shares the host with what it measures: wrk sends a request in a few microseconds of CPU where
// autocannon, in Node, takes ~30, so on 2 cores the load generator no longer decides the rate.
// The requests go round-robin, each connection's own turn (wrk's Lua `request()`), as autocannon's
// `requests` list does.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface WrkRequest { method: string; path: string; headers: Record<string, string> }

export interface WrkResult {
  requests: number;
  /** s */
  seconds: number;
  /** ms */
  p50: number;
  p99: number;
  /** Answers other than 2xx/3xx. */
  non2xx: number;
  /** Connect, read and write errors, and timeouts. */
  errors: number;
}

/** The wrk binary's path, or null when it is not installed (looked up once). */
export const WRK: string | null = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();

const lua = (s: string): string => JSON.stringify(s); // a JSON string literal is a Lua string literal for this ASCII

/** The Lua script: the request list, round-robin, and a JSON summary printed on one line at the end. */
function script(requests: WrkRequest[]): string {
  const reqs = requests.map((r) => {
    const headers = Object.entries(r.headers).map(([k, v]) => `[${lua(k)}]=${lua(v)}`).join(',');
    return `wrk.format(${lua(r.method)}, ${lua(r.path)}, {${headers}})`;
  });
  return `local reqs
local i = 0
init = function(args)
  reqs = { ${reqs.join(',\n    ')} }
  i = math.random(#reqs) - 1
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
`;
}

/** Runs wrk against `origin` for `seconds` on `connections` connections and `threads` threads. */
export function wrkLoad(origin: string, requests: WrkRequest[], o: { connections: number; seconds: number; threads?: number; timeoutSeconds?: number }): Promise<WrkResult> {
  const bin = WRK;
  if (!bin) return Promise.reject(new Error('wrk is not installed (apt-get install wrk), or pass --client autocannon'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wrk-'));
  const file = path.join(dir, 'mix.lua');
  fs.writeFileSync(file, script(requests));
  const threads = Math.max(1, Math.min(o.threads ?? 1, o.connections));
  const args = ['-t', String(threads), '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', `${o.timeoutSeconds ?? 10}s`, '-s', file, origin];
  return new Promise<WrkResult>((resolve, reject) => {
    execFile(bin, args, { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      if (err) return reject(new Error(`wrk failed: ${err.message} ${stderr}`));
      const line = /^WRK_JSON (.*)$/m.exec(stdout)?.[1];
      if (!line) return reject(new Error(`wrk printed no summary: ${stdout} ${stderr}`));
      const j = JSON.parse(line) as { requests: number; duration_us: number; p50_us: number; p99_us: number; status: number; errors: number };
      resolve({ requests: j.requests, seconds: j.duration_us / 1e6, p50: j.p50_us / 1000, p99: j.p99_us / 1000, non2xx: j.status, errors: j.errors });
    });
  });
}
