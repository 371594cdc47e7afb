import { openDb, WebhookStore, type OutboxRow } from '../store';
import { boolFlag, intFlag, requireString, type Command, type FlagTable, type Parsed } from './flags';

const FLAGS = {
  db: { type: 'string', value: 'FILE', env: 'VISIBILITY_DB', shows: 'required', help: 'the database whose subscriptions and deliveries to list' },
  json: { type: 'boolean', help: 'one JSON document instead of text' },
  limit: { type: 'int', value: 'N', default: 50, min: 1, max: 100_000, help: 'the newest deliveries shown' },
} satisfies FlagTable;

/** A delivery as listed: the message's fields without its payload. */
function listed(r: OutboxRow): Omit<OutboxRow, 'payload' | 'seq'> {
  const { payload: _p, seq: _s, ...rest } = r;
  return rest;
}

async function webhooksCommand(p: Parsed<typeof FLAGS>): Promise<number> {
  const file = requireString(p, 'db');
  // Read-only: the secrets are in the file, and none is ever printed.
  const hooks = new WebhookStore(openDb(file, { readonly: true }));
  try {
    const subscriptions = hooks.listed();
    const deliveries = hooks.recent(intFlag(p, 'limit')).map(listed);
    const counts = hooks.counts();
    if (boolFlag(p, 'json')) {
      console.log(JSON.stringify({ subscriptions, outbox: counts, deliveries }, null, 2));
      return 0;
    }
    console.log(`subscriptions: ${subscriptions.filter((s) => !s.deleted).length} live, ${subscriptions.filter((s) => s.deleted).length} ended`);
    for (const s of subscriptions) {
      const projects = s.project_ids === null ? 'every project of the account' : s.project_ids.join(',');
      console.log(`  ${s.id}${s.deleted ? ' (ended)' : ''}  account ${s.account_id}  ${s.url ?? ''}  ${s.events.join(',')}  ${projects}`);
    }
    console.log(`outbox: ${counts.pending} pending, ${counts.delivered} delivered, ${counts.dead} dead-lettered, ${counts.cancelled} cancelled`);
    for (const d of deliveries) {
      console.log(`  ${d.created_at}  ${d.status.padEnd(9)}  ${d.type.padEnd(15)}  ${d.message_id}  subscription ${d.webhook_id}  project ${d.project_id}  attempts ${d.attempts}` +
        `${d.last_result ? `  last: ${d.last_result}` : ''}${d.status === 'pending' ? `  next ${d.next_attempt_at}` : ''}`);
    }
    return 0;
  } finally {
    hooks.close();
  }
}

export const command: Command<typeof FLAGS> = { synopsis: '--db FILE [--json]', flags: FLAGS, run: webhooksCommand };
