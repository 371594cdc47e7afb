import fs from 'node:fs';

/**
 * A progress line for long commands (replay, produce, snapshot): on a terminal only, rewritten in
 * place at most a few times a second, erased before the final summary. Piped output and --quiet
 * get nothing: logs and scripts read the summary line, which never changes.
 */
export interface ProgressOptions {
  /** The command, shown first: "replay". */
  label: string;
  /** What is counted: "events", "pages". */
  unit: string;
  /** The input's size in bytes: the ETA is the time the rest of it takes at the rate so far. */
  totalBytes: number;
  quiet: boolean;
  stream?: NodeJS.WriteStream;
  now?: () => number;
}

/** The size of the inputs together: what a progress line's ETA is measured against. */
export function totalSize(files: readonly string[]): number {
  return files.reduce((n, f) => n + fs.statSync(f).size, 0);
}

/** Rewrites per second at most: enough to look alive, cheap beside the work. */
const INTERVAL_MS = 250;

const count = (n: number): string => Math.round(n).toLocaleString('en-US');

/** 75 -> "1:15"; 3725 -> "1:02:05". */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** The line itself: "replay: 12,000 events, 8,500 events/s, 0:02 elapsed, ETA 0:05 (29%)". */
export function progressText(o: Pick<ProgressOptions, 'label' | 'unit' | 'totalBytes'>, done: number, bytes: number, seconds: number): string {
  const rate = seconds > 0 ? done / seconds : 0;
  const share = o.totalBytes > 0 ? Math.min(1, bytes / o.totalBytes) : 0;
  // Only once some input is read: before that the rate says nothing about the rest.
  const eta = share > 0 && share < 1 ? `, ETA ${clock((seconds / share) * (1 - share))} (${Math.floor(share * 100)}%)` : '';
  return `${o.label}: ${count(done)} ${o.unit}, ${count(rate)} ${o.unit}/s, ${clock(seconds)} elapsed${eta}`;
}

export class Progress {
  private readonly stream: NodeJS.WriteStream;
  private readonly now: () => number;
  private readonly started: number;
  private readonly enabled: boolean;
  private lastShown = -Infinity;
  private shown = false;

  constructor(private readonly o: ProgressOptions) {
    this.stream = o.stream ?? process.stderr;
    this.now = o.now ?? Date.now;
    this.started = this.now();
    this.enabled = !o.quiet && this.stream.isTTY === true;
  }

  /** The input's size, when it is known only once the work is planned (an export's partitions). */
  setTotal(total: number): void {
    this.o.totalBytes = total;
  }

  /** `done` units so far, `bytes` of the input read so far. */
  update(done: number, bytes: number): void {
    if (!this.enabled) return;
    const t = this.now();
    if (t - this.lastShown < INTERVAL_MS) return;
    this.lastShown = t;
    this.shown = true;
    this.stream.write(`\r${progressText(this.o, done, bytes, (t - this.started) / 1000)}\x1b[K`);
  }

  /** Erases the line, so the summary (or an error) starts on a clean one. */
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
