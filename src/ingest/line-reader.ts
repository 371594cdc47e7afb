import fs from 'node:fs';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** Bytes of a file read so far (compressed bytes for gzip): progress against the file's size. */
export interface ByteMeter {
  bytes: number;
}

const LF = 0x0a;
const CR = 0x0d;
const CHUNK = 1 << 20;

/**
 * Splits bytes into lines exactly as node:readline with `crlfDelay: Infinity` does (line numbers
 * are stored as resume positions, so they must not move): \n, \r\n and a lone \r end a line and
 * are dropped, a \r\n split between chunks is one ending, a last line without an ending counts
 * unless it is empty, a BOM is kept, and invalid UTF-8 becomes U+FFFD as Buffer#toString makes it
 * (readline's StringDecoder yields the same text: line endings are ASCII, where a UTF-8 decoder
 * always resynchronizes, so decoding line by line equals decoding the stream). One difference is
 * replicated on purpose: readline never flushes its decoder, so an incomplete UTF-8 sequence at the
 * very end of the input is dropped rather than replaced (see end()).
 * It works on bytes: readline decodes each chunk, then splits the text with a regex.
 */
export class LineSplitter {
  /** Pieces of the line not yet ended (it began in an earlier chunk). */
  private pending: Buffer[] = [];
  /** The last chunk ended with \r: a \n first in the next chunk belongs to that ending. */
  private afterCr = false;

  /** Appends the lines that chunk ends to out. */
  push(chunk: Buffer, out: string[]): void {
    const bytes: Buffer[] = [];
    this.pushBytes(chunk, bytes);
    for (const b of bytes) out.push(b.toString('utf8'));
  }

  /** Appends the last line (the one without an ending), if any, to out. */
  end(out: string[]): void {
    const bytes: Buffer[] = [];
    this.endBytes(bytes);
    for (const b of bytes) out.push(b.toString('utf8'));
  }

  /**
   * push() as bytes: each line's bytes, undecoded (a view of `chunk` when the line lies in it), so a
   * reader that keeps them (the rows keep an event as received) copies them instead of encoding its text again.
   */
  pushBytes(chunk: Buffer, out: Buffer[]): void {
    const n = chunk.length;
    let start = 0;
    // readline drops a leading \n of the next data after a \r, then forgets the \r whatever came.
    if (this.afterCr) {
      this.afterCr = false;
      if (n > 0 && chunk[0] === LF) start = 1;
    }
    let lf = chunk.indexOf(LF, start);
    // NDJSON rarely has a \r: one search tells, and the loop then looks for \n only.
    let cr = chunk.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < n) {
          next = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
        } else {
          next = n;
          this.afterCr = true;
        }
      } else {
        end = lf;
        next = lf + 1;
      }
      out.push(this.take(chunk, start, end));
      start = next;
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
    }
    if (start < n) this.pending.push(chunk.subarray(start));
  }

  /** end() as bytes. */
  endBytes(out: Buffer[]): void {
    if (this.pending.length === 0) return;
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    // readline emits its line buffer only if non-empty, without flushing its decoder.
    const line = bytes.subarray(0, bytes.length - heldUtf8Tail(bytes));
    if (line.length > 0) out.push(line);
  }

  private take(chunk: Buffer, start: number, end: number): Buffer {
    if (this.pending.length === 0) return chunk.subarray(start, end);
    this.pending.push(chunk.subarray(start, end));
    const line = Buffer.concat(this.pending);
    this.pending = [];
    return line;
  }
}

/**
 * How many bytes at the end of bytes Node's StringDecoder would hold back as the start of an
 * incomplete character (and, never flushed by readline, drop): walking back from the last byte
 * over at most 3 continuation bytes to a lead byte whose length (by its high bits alone: 110xxxxx 2,
 * 1110xxxx 3, 11110xxx 4) is more than the bytes seen. This mirrors src/string_decoder.cc.
 */
export function heldUtf8Tail(bytes: Uint8Array): number {
  const n = bytes.length;
  if (n === 0 || (bytes[n - 1]! & 0x80) === 0) return 0;
  let seen = 0;
  for (let i = n - 1; i >= 0; i--) {
    const b = bytes[i]!;
    seen++;
    if ((b & 0xc0) === 0x80) {
      if (seen >= 4) return 0;
      continue;
    }
    const need = (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 0;
    return need > seen ? seen : 0;
  }
  return 0;
}

/** Raw chunks of a file, plain or gunzipped (told apart by the magic bytes, not the name). */
async function* chunksOf(file: string, meter?: ByteMeter): AsyncGenerator<Buffer> {
  const fd = fs.openSync(file, 'r');
  const magic = Buffer.alloc(2);
  fs.readSync(fd, magic, 0, 2, 0);
  fs.closeSync(fd);
  const raw = fs.createReadStream(file, { highWaterMark: CHUNK });
  if (meter) raw.on('data', (chunk) => (meter.bytes += chunk.length));
  const input: Readable = magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(zlib.createGunzip({ chunkSize: CHUNK })) : raw;
  // Taken on 'data', as readline takes them, not with the stream's async iterator: after an
  // error (a truncated gzip) that iterator drops what the stream had already produced, where
  // readline still delivered its lines; and an error of the file under a gunzip is seen too.
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | null = null;
  const signal = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  input.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length >= 2) input.pause(); // read ahead one chunk, no more
    signal();
  });
  input.on('end', () => {
    ended = true;
    signal();
  });
  const fail = (e: Error): void => {
    failure ??= e;
    signal();
  };
  input.on('error', fail);
  if (input !== raw) raw.on('error', fail);
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        if (queue.length < 2 && input.isPaused()) input.resume();
        yield chunk;
      } else if (failure) {
        throw failure;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => (wake = resolve));
      }
    }
  } finally {
    raw.destroy();
    if (input !== raw) input.destroy();
  }
}

/**
 * Lines of an NDJSON file, gzip or plain, a chunk's worth (~1 MiB) at a time: for a reader that
 * can take them in batches, one await per chunk instead of one per line.
 */
export async function* readLineBatches(file: string, meter?: ByteMeter): AsyncGenerator<string[]> {
  for await (const lines of readByteLineBatches(file, meter)) yield lines.map((b) => b.toString('utf8'));
}

/** readLineBatches as each line's bytes (LineSplitter.pushBytes). */
export async function* readByteLineBatches(file: string, meter?: ByteMeter): AsyncGenerator<Buffer[]> {
  const splitter = new LineSplitter();
  for await (const chunk of chunksOf(file, meter)) {
    const lines: Buffer[] = [];
    splitter.pushBytes(chunk, lines);
    if (lines.length > 0) yield lines;
  }
  const last: Buffer[] = [];
  splitter.endBytes(last);
  if (last.length > 0) yield last;
}

/** Lines of an NDJSON file, gzip or plain (told apart by the magic bytes, not the name). */
export async function* readLines(file: string, meter?: ByteMeter): AsyncGenerator<string> {
  for await (const lines of readLineBatches(file, meter)) {
    for (const line of lines) yield line;
  }
}
