import fs from 'node:fs';
import readline from 'node:readline';
import zlib from 'node:zlib';

/** Bytes of a file read so far (compressed bytes for gzip): progress against the file's size. */
export interface ByteMeter {
  bytes: number;
}

/** Lines of an NDJSON file, gzip or plain (told apart by the magic bytes, not the name). */
export async function* readLines(file: string, meter?: ByteMeter): AsyncGenerator<string> {
  const fd = fs.openSync(file, 'r');
  const magic = Buffer.alloc(2);
  fs.readSync(fd, magic, 0, 2, 0);
  fs.closeSync(fd);
  const raw = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  if (meter) raw.on('data', (chunk) => (meter.bytes += chunk.length));
  const input = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(zlib.createGunzip()) : raw;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) yield line;
  } finally {
    lines.close();
    raw.destroy();
  }
}
