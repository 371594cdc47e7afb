import type { ValidateFunction } from 'ajv';
import { describeErrors, readSchemaDir, type JsonSchema } from '../../events';

/**
 * The JSON Schemas of the 200 bodies (schemas/api): the same ones the OpenAPI document serves, their
 * validators generated from them as code by `npm run gen` (body-validators.gen.ts, which
 * test/build/generated-types.test.ts keeps in step). Compiling them here cost ~210 ms of CPU at each start of
 * serve's main thread and of each build thread, beside the Kafka thread's first catch-up.
 */
export class BodySchemas {
  readonly schemas: Map<string, JsonSchema>;
  private readonly validators: ReadonlyMap<string, ValidateFunction>;
  /** Bodies validated so far: the hit path must never add to it. */
  checks = 0;

  constructor() {
    this.schemas = readSchemaDir('schemas/api');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- generated CommonJS
    const generated = require('./body-validators.gen') as Record<string, ValidateFunction>;
    this.validators = new Map([...this.schemas.keys()].map((name) => {
      const validate = generated[name];
      if (validate === undefined) throw new Error(`schemas/api/${name}.json has no generated validator: run \`npm run gen\``);
      return [name, validate];
    }));
  }

  /** null when the body matches its schema, else what is wrong with it. */
  check(name: string, body: unknown): string | null {
    this.checks += 1;
    const validate = this.validators.get(name);
    if (!validate) return `no schema named ${name}`;
    return validate(body) ? null : describeErrors(validate.errors);
  }
}
