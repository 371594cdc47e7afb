import { toUtcIso } from '../lib/time';
import { describeErrors, eventSchemas, SCHEMA_VERSION, type EventSchemas } from './schemas';
import type { Envelope, EventType } from './types.gen';

export type DeadLetterReason =
  | 'unparseable'
  | 'invalid_envelope'
  | 'unknown_type'
  | 'unsupported_schema_version'
  | 'invalid_payload'
  | 'projection_failed'
  // A sharded consumer's record of a project another shard holds (src/ingest/kafka/shard-screen.ts).
  | 'foreign_project';

export type Decoded =
  | { ok: true; event: Envelope }
  | { ok: false; reason: DeadLetterReason; detail: string; eventId: string | null; type: string | null };

function reject(reason: DeadLetterReason, detail: string, value?: Record<string, unknown>): Decoded {
  const eventId = typeof value?.event_id === 'string' ? value.event_id : null;
  const type = typeof value?.type === 'string' ? value.type : null;
  return { ok: false, reason, detail, eventId, type };
}

/**
 * Raw line -> validated envelope, or the reason it goes to the dead letters.
 * Checks run from the outside in, so the reason names the first thing that is wrong.
 * All date-time fields are normalized to UTC ISO, the form the store compares and serves.
 */
export function decodeEvent(raw: string): Decoded {
  return decodeWith(raw, eventSchemas(), toUtcIso);
}

/** decodeEvent with given schemas and time normalization: the tests decode with reference ones. */
export function decodeWith(raw: string, schemas: EventSchemas, normalizeTime: (value: string) => string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(raw) as unknown;
  } catch (e) {
    return reject('unparseable', `not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return reject('unparseable', 'not a JSON object');
  }
  const record = value as Record<string, unknown>;
  if (!schemas.envelope(record)) return reject('invalid_envelope', describeErrors(schemas.envelope.errors), record);
  const type = record.type as string;
  const validate = schemas.byType.get(type);
  if (!validate) return reject('unknown_type', `unknown event type "${type}"`, record);
  if (record.schema_version !== SCHEMA_VERSION) {
    return reject('unsupported_schema_version', `schema_version ${String(record.schema_version)} of "${type}" is not supported (supported: ${SCHEMA_VERSION})`, record);
  }
  const data = record.data as Record<string, unknown>;
  if (!validate(data)) return reject('invalid_payload', `data${describeErrors(validate.errors).replace(/^\//, '/')}`, record);
  try {
    record.occurred_at = normalizeTime(record.occurred_at as string);
    for (const field of schemas.timeFields.get(type)!) {
      if (typeof data[field] === 'string') data[field] = normalizeTime(data[field] as string);
    }
  } catch (e) {
    return reject('invalid_payload', (e as Error).message, record);
  }
  return { ok: true, event: record as unknown as Envelope<EventType> };
}
