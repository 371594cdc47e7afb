// The aggregate tables counted again from the stored runs by plain SQL (oracle-aggregates.sql): what
// the writer's incremental sums must equal.
import fs from 'node:fs';
import path from 'node:path';
import { domainOf, type Db } from '../../src/store';

const ORACLE_SQL = fs.readFileSync(path.join(__dirname, 'oracle-aggregates.sql'), 'utf8');

/** The aggregate tables replaced by what test/helpers/oracle-aggregates.sql counts from the stored runs. */
export function oracleAggregates(db: Db): void {
  db.function('domain_of', { deterministic: true }, (url: unknown) => domainOf(String(url)));
  db.transaction(() => db.exec(ORACLE_SQL))();
}
