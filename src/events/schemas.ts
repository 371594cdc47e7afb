import fs from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction, type ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { packageRoot } from '../lib/root';
import { UUID_PATTERN } from '../lib/ids';

export type JsonSchema = Record<string, unknown>;

/** One Ajv for the whole process: schemas compile once. Ids are canonical lowercase uuids. */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv, ['date-time', 'uri', 'date']);
  ajv.addFormat('uuid', UUID_PATTERN);
  return ajv;
}

export function readSchemaDir(dir: string): Map<string, JsonSchema> {
  const abs = path.join(packageRoot(), dir);
  const out = new Map<string, JsonSchema>();
  for (const file of fs.readdirSync(abs).sort()) {
    if (!file.endsWith('.json')) continue;
    out.set(file.slice(0, -'.json'.length), JSON.parse(fs.readFileSync(path.join(abs, file), 'utf8')) as JsonSchema);
  }
  return out;
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'invalid';
  return errors.map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
}

export interface EventSchemas {
  envelope: ValidateFunction;
  byType: Map<string, ValidateFunction>;
  /** Top-level fields of each type's data declared as date-time: normalized to UTC on decode. */
  timeFields: Map<string, string[]>;
}

let loaded: EventSchemas | undefined;

export function eventSchemas(): EventSchemas {
  if (loaded) return loaded;
  const ajv = createAjv();
  const schemas = readSchemaDir('schemas/events');
  const envelope = ajv.compile(schemas.get('envelope')!);
  const byType = new Map<string, ValidateFunction>();
  const timeFields = new Map<string, string[]>();
  for (const [type, schema] of schemas) {
    if (type === 'envelope') continue;
    byType.set(type, ajv.compile(schema));
    const props = (schema.properties ?? {}) as Record<string, { format?: string }>;
    timeFields.set(type, Object.keys(props).filter((k) => props[k]!.format === 'date-time'));
  }
  loaded = { envelope, byType, timeFields };
  return loaded;
}

export const SCHEMA_VERSION = 1;
