// Response bodies in read-model tests: built directly, then checked against their JSON Schema.
import type { Test } from 'tap';
import { createAjv, describeErrors, readSchemaDir } from '../src/events';
import type { Endpoint, ReadArgs, ReadStore } from '../src/readmodels';

export const apiAjv = createAjv();
for (const schema of readSchemaDir('schemas/api').values()) apiAjv.addSchema(schema);

/** Builds a body and fails the test when it does not validate against the endpoint's schema. */
export function checkedBody<T>(tt: Test, e: Endpoint, store: ReadStore, args: ReadArgs): T {
  const b = e.build(store, args);
  const validate = apiAjv.getSchema(`api/${e.schema}.json`)!;
  const valid = validate(b);
  tt.ok(valid, valid ? `${e.name} body validates` : `${e.name} body: ${describeErrors(validate.errors)}`);
  return b as T;
}
