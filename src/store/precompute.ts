import { decodeEvent, type DeadLetterReason, type EventType, type PromptRunCompleted } from '../events';
import { precomputeRun, type PrecomputedRun } from './run-store';
import type { Version } from './versions';

/** One raw event and where it came from: 'file:<path>' + line, or 'kafka:<topic>:<partition>' + offset. */
export interface SourceEvent {
  raw: string;
  source: string;
  position: number;
}

/** An event the dead letters will keep, with why. */
export interface RejectedEvent {
  ok: false;
  source: string;
  position: number;
  /** The line, or its UTF-8 bytes when a precompute thread sent them. */
  raw: string | Uint8Array;
  reason: DeadLetterReason;
  detail: string;
  eventId: string | null;
  type: string | null;
}

/** A valid event: its version and data, and for a prompt run the row made ready to write (data is then null). */
export interface AcceptedEvent {
  ok: true;
  source: string;
  position: number;
  type: EventType;
  version: Version;
  data: unknown;
  run?: PrecomputedRun;
  /**
   * For the dead letters, should projecting it fail: the line, or its UTF-8 bytes when a precompute
   * thread sent them (ingest/ndjson.worker.ts, ingest/precomputer.worker.ts: views of one buffer per batch, moved, not copied).
   */
  raw: string | Uint8Array;
}

export type PrecomputedEvent = RejectedEvent | AcceptedEvent;

/** An event's raw bytes, as the dead letters keep them. */
export function rawBytes(raw: string | Uint8Array): Buffer {
  return typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

/**
 * Everything about an event that needs no database: decoding, validation and, for prompt runs (the
 * bulk of any log), what the aggregates take of it. Pure, so the writer's thread can leave it to
 * another thread.
 */
export function precomputeEvent(e: SourceEvent): PrecomputedEvent {
  const d = decodeEvent(e.raw);
  if (!d.ok) return { ok: false, source: e.source, position: e.position, raw: e.raw, reason: d.reason, detail: d.detail, eventId: d.eventId, type: d.type };
  const { event } = d;
  const version = { at: event.occurred_at, id: event.event_id };
  const run = event.type === 'prompt_run.completed';
  // One object literal of one shape, not a base spread into another: this runs for every event.
  return {
    ok: true, source: e.source, position: e.position, type: event.type, version, raw: e.raw,
    data: run ? null : event.data, run: run ? precomputeRun(event.data as PromptRunCompleted, e.raw) : undefined,
  };
}
