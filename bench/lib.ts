// Pieces several benches share.
import fs from 'node:fs';
import net from 'node:net';
import { generateWorld, type WorldOptions } from '../fixtures/world';

/** A port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Writes a generated world as NDJSON, once: same options, same bytes; kept (bench/out is gitignored). */
export async function writeLog(file: string, opts: WorldOptions): Promise<void> {
  if (fs.existsSync(file)) return;
  const tmp = `${file}.tmp`;
  const out = fs.createWriteStream(tmp);
  for (const line of generateWorld(opts)) if (!out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((resolve, reject) => out.end(() => resolve()).once('error', reject));
  fs.renameSync(tmp, file);
}
