import type { DeadLetterReason, EventType } from '../events';
import type { PrecomputedEvent, RunFacts } from '../store';

/**
 * Precomputed events as they cross from a precompute thread to the writer's. Posting the precomputed
 * objects themselves cost ~9 us an event to serialize (a run is some sixty small values) and as much
 * again to take apart and collect on the writer's side, which is the busy one. Here a batch is a few
 * flat arrays: every string once (`strings`: a batch repeats its projects, prompts, engines, URLs and
 * titles run after run, and the writer then gets one string for all of them, whose hash V8 keeps),
 * the fields as indexes and numbers in typed arrays, and every event's line as UTF-8 in one buffer.
 * The typed arrays and the buffer are moved, not copied; the writer binds a run's line as it is.
 */
export interface EncodedBatch {
  source: string;
  strings: string[];
  refs: Int32Array;
  nums: Float64Array;
  /** The data of accepted events that are not runs (a few in a hundred), as they are. */
  others: unknown[];
  lines: ArrayBuffer;
}

/** The transfer list of an encoded batch: what postMessage moves instead of copying. */
export const transferOf = (b: EncodedBatch): ArrayBuffer[] => [b.refs.buffer as ArrayBuffer, b.nums.buffer as ArrayBuffer, b.lines];

const REJECTED = 0;
const RUN = 1;
const OTHER = 2;
const NONE = -1;

/** A growable typed array of numbers, written in place, reused from batch to batch. */
class Numbers<T extends Int32Array | Float64Array> {
  length = 0;

  constructor(private a: T, private readonly make: (n: number) => T) {}

  push(x: number): void {
    if (this.length === this.a.length) {
      const grown = this.make(this.a.length * 2);
      grown.set(this.a);
      this.a = grown;
    }
    this.a[this.length++] = x;
  }

  /** The numbers so far, in an array of their own (moved to the writer), and empty again. */
  take(): T {
    const out = this.a.slice(0, this.length) as T;
    this.length = 0;
    return out;
  }
}

export class BatchEncoder {
  private readonly index = new Map<string, number>();
  private strings: string[] = [];
  private readonly refs = new Numbers(new Int32Array(1 << 14), (n) => new Int32Array(n));
  private readonly nums = new Numbers(new Float64Array(1 << 14), (n) => new Float64Array(n));
  private others: unknown[] = [];
  private lines: Buffer = Buffer.allocUnsafeSlow(1 << 20);
  private used = 0;
  size = 0;

  constructor(private readonly source: string) {}

  add(e: PrecomputedEvent): void {
    this.size += 1;
    this.nums.push(e.position);
    this.line(e.raw);
    if (!e.ok) {
      this.refs.push(REJECTED);
      this.refs.push(this.str(e.reason));
      this.refs.push(this.str(e.detail));
      this.refs.push(this.str(e.eventId));
      this.refs.push(this.str(e.type));
      return;
    }
    this.refs.push(e.run ? RUN : OTHER);
    this.refs.push(this.str(e.type));
    this.refs.push(this.unique(e.version.at));
    this.refs.push(this.unique(e.version.id));
    if (!e.run) {
      this.refs.push(this.others.length);
      this.others.push(e.data);
      return;
    }
    this.line(e.run.factsJson);
    const f = e.run.facts;
    const refs = this.refs;
    refs.push(this.unique(f.id));
    refs.push(this.str(f.run_group_id));
    refs.push(this.str(f.project_id));
    refs.push(this.str(f.prompt_id));
    refs.push(this.str(f.engine_id));
    refs.push(this.str(f.status));
    refs.push(this.unique(f.completed_at));
    refs.push(this.str(f.day));
    refs.push(this.str(f.dims ?? null));
    refs.push(f.competitors.length);
    refs.push(f.urls.length);
    this.nums.push(f.brand_position ?? NaN);
    this.nums.push(f.brand_sentiment ?? NaN);
    for (const c of f.competitors) {
      refs.push(this.str(c.competitor_id));
      this.nums.push(c.position);
      this.nums.push(c.sentiment ?? NaN);
    }
    for (const u of f.urls) {
      refs.push(this.str(u.url));
      refs.push(this.str(u.domain));
      refs.push(this.str(u.title));
    }
  }

  /** The batch so far, ready to post (with transferOf); the encoder starts a new one. */
  take(): EncodedBatch {
    // The lines in a buffer of their own, which moves to the writer; this one is written again.
    const lines = new ArrayBuffer(this.used);
    new Uint8Array(lines).set(this.lines.subarray(0, this.used));
    const b: EncodedBatch = { source: this.source, strings: this.strings, refs: this.refs.take(), nums: this.nums.take(), others: this.others, lines };
    this.index.clear();
    this.strings = [];
    this.others = [];
    this.used = 0;
    this.size = 0;
    return b;
  }

  /** A string that is not worth looking up (an event's own id and times): appended as it is. */
  private unique(s: string): number {
    this.strings.push(s);
    return this.strings.length - 1;
  }

  /** A string the batch repeats (ids of projects, prompts, engines; URLs, domains, titles): once. */
  private str(s: string | null): number {
    if (s === null) return NONE;
    let i = this.index.get(s);
    if (i === undefined) {
      this.index.set(s, (i = this.strings.length));
      this.strings.push(s);
    }
    return i;
  }

  /** A line (an event, a run's facts) into the batch's buffer: its offset and length go to `nums`. */
  private line(raw: string | Uint8Array): void {
    const max = typeof raw === 'string' ? raw.length * 3 : raw.byteLength;
    if (this.used + max > this.lines.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.lines.length * 2, this.used + max));
      this.lines.copy(grown, 0, 0, this.used);
      this.lines = grown;
    }
    const n = typeof raw === 'string' ? this.lines.write(raw, this.used) : (this.lines.set(raw, this.used), raw.byteLength);
    this.nums.push(this.used);
    this.nums.push(n);
    this.used += n;
  }
}

/**
 * The events of an encoded batch, as the projector takes them; a line is a view of the batch's buffer.
 * Written as one plain loop (no closures, spreads or destructured arrays per event): it runs on the
 * writer's thread, the busy one, for every event.
 */
export function decodeBatch(b: EncodedBatch): PrecomputedEvent[] {
  const { strings, refs, nums, source, lines } = b;
  const out: PrecomputedEvent[] = [];
  let r = 0;
  let n = 0;
  while (r < refs.length) {
    const position = nums[n++]!;
    const raw = new Uint8Array(lines, nums[n++]!, nums[n++]!);
    const kind = refs[r++]!;
    if (kind === REJECTED) {
      const reason = strings[refs[r++]!] as DeadLetterReason;
      const detail = strings[refs[r++]!]!;
      const eventId = stringOrNull(strings, refs[r++]!);
      const type = stringOrNull(strings, refs[r++]!);
      out.push({ ok: false, source, position, raw, reason, detail, eventId, type });
      continue;
    }
    const type = strings[refs[r++]!] as EventType;
    const at = strings[refs[r++]!]!;
    const version = { at, id: strings[refs[r++]!]! };
    if (kind === OTHER) {
      out.push({ ok: true, source, position, type, version, raw, data: b.others[refs[r++]!] });
      continue;
    }
    const factsJson = new Uint8Array(lines, nums[n++]!, nums[n++]!);
    const id = strings[refs[r++]!]!;
    const group = strings[refs[r++]!]!;
    const project = strings[refs[r++]!]!;
    const prompt = strings[refs[r++]!]!;
    const engine = strings[refs[r++]!]!;
    const status = strings[refs[r++]!]!;
    const completedAt = strings[refs[r++]!]!;
    const day = strings[refs[r++]!]!;
    const dims = stringOrNull(strings, refs[r++]!);
    const competitorCount = refs[r++]!;
    const urlCount = refs[r++]!;
    const brandPosition = numOrNull(nums[n++]!);
    const brandSentiment = numOrNull(nums[n++]!);
    const facts: RunFacts = {
      id, run_group_id: group, project_id: project, prompt_id: prompt, engine_id: engine, status, completed_at: completedAt, day,
      brand_position: brandPosition, brand_sentiment: brandSentiment, competitors: [], urls: [], dims,
    };
    for (let i = 0; i < competitorCount; i += 1) {
      const competitor_id = strings[refs[r++]!]!;
      const position = nums[n++]!;
      facts.competitors.push({ competitor_id, position, sentiment: numOrNull(nums[n++]!) });
    }
    for (let i = 0; i < urlCount; i += 1) {
      const url = strings[refs[r++]!]!;
      const domain = strings[refs[r++]!]!;
      facts.urls.push({ url, domain, title: stringOrNull(strings, refs[r++]!) });
    }
    out.push({ ok: true, source, position, type, version, raw, data: null, run: { facts, event: raw, factsJson } });
  }
  return out;
}

const stringOrNull = (strings: string[], i: number): string | null => (i === NONE ? null : strings[i]!);
const numOrNull = (x: number): number | null => (Number.isNaN(x) ? null : x);
