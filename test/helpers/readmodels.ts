// Read-model tests: the arguments of a read, and bodies built directly, then checked against their JSON Schema.
import type { Test } from 'tap';
import { createAjv, describeErrors, readSchemaDir } from '../../src/events';
import type { Endpoint, ReadArgs, ReadStore } from '../../src/readmodels';
import { ABSENT } from '../../src/readmodels/params.gen';
import { W } from './events';

/**
 * The arguments of a read: the tiny world's account, project and run group (events.ts W), limit 100,
 * a 7-day window, no filter; `over` replaces any of them.
 */
export function readArgs(over: Partial<ReadArgs> = {}): ReadArgs {
  // From ABSENT (every query argument as when left out): a new parameter needs no edit here.
  return { ...ABSENT, accountId: W.account, projectId: W.project, runGroupId: W.group, limit: 100, windowDays: 7, ...over };
}

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
