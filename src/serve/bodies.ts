import type { ValidateFunction } from 'ajv';
import { createAjv, describeErrors, readSchemaDir, type JsonSchema } from '../events';

/** The JSON Schemas of the 200 bodies (schemas/api), compiled once: the same ones the OpenAPI document serves. */
export class BodySchemas {
  readonly schemas: Map<string, JsonSchema>;
  private readonly validators = new Map<string, ValidateFunction>();
  /** Bodies validated so far: the hit path must never add to it. */
  checks = 0;

  constructor() {
    this.schemas = readSchemaDir('schemas/api');
    const ajv = createAjv();
    for (const schema of this.schemas.values()) ajv.addSchema(schema);
    for (const name of this.schemas.keys()) this.validators.set(name, ajv.getSchema(`api/${name}.json`)!);
  }

  /** null when the body matches its schema, else what is wrong with it. */
  check(name: string, body: unknown): string | null {
    this.checks += 1;
    const validate = this.validators.get(name);
    if (!validate) return `no schema named ${name}`;
    return validate(body) ? null : describeErrors(validate.errors);
  }
}
