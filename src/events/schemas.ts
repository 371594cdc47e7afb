import fs from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction, type ErrorObject } from 'ajv/dist/2020';
import { packageRoot } from '../lib/root';
import { schemaFormats } from './formats';

export type JsonSchema = Record<string, unknown>;

export const AJV_OPTIONS = { allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true } as const;

/**
 * One Ajv for the whole process: schemas compile once. Ids are canonical lowercase uuids
 * (UUID_PATTERN). The formats accept what ajv-formats' full 'date-time', 'uri' and 'date' do,
 * faster (./formats.ts).
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020(AJV_OPTIONS);
  for (const [name, format] of Object.entries(schemaFormats)) ajv.addFormat(name, format);
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

/**
 * The event schemas' validators, generated from the schemas as code by `npm run gen`
 * (validators.gen.ts, which test/build/generated-types.test.ts keeps in step): compiling them here cost ~185 ms
 * at each start of a decoding thread.
 */
export function eventSchemas(): EventSchemas {
  if (loaded) return loaded;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- generated CommonJS, loaded when first needed
  const generated = require('./validators.gen') as Record<string, ValidateFunction>;
  const schemas = readSchemaDir('schemas/events');
  const byType = new Map<string, ValidateFunction>();
  for (const type of schemas.keys()) if (type !== 'envelope') byType.set(type, generated[type]!);
  loaded = { envelope: generated.envelope!, byType, timeFields: timeFieldsOf(schemas) };
  return loaded;
}

/** Top-level fields of each type's data declared as date-time. */
function timeFieldsOf(schemas: Map<string, JsonSchema>): Map<string, string[]> {
  const timeFields = new Map<string, string[]>();
  for (const [type, schema] of schemas) {
    if (type === 'envelope') continue;
    const props = (schema.properties ?? {}) as Record<string, { format?: string }>;
    timeFields.set(type, Object.keys(props).filter((k) => props[k]!.format === 'date-time'));
  }
  return timeFields;
}

/** The event schemas compiled by an Ajv (createAjv()'s, or a test's reference one). */
export function compileEventSchemas(ajv: Ajv2020): EventSchemas {
  const schemas = readSchemaDir('schemas/events');
  const envelope = ajv.compile(schemas.get('envelope')!);
  const byType = new Map<string, ValidateFunction>();
  for (const [type, schema] of schemas) if (type !== 'envelope') byType.set(type, ajv.compile(schema));
  return { envelope, byType, timeFields: timeFieldsOf(schemas) };
}

export const SCHEMA_VERSION = 1;
