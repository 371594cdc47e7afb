-- 021: pushed signals (signed webhooks).
--
-- webhooks: the subscriptions, from webhook.subscribed / webhook.unsubscribed (catalog events: every
-- shard has them). An entity row like the others (last writer wins by version; an unsubscribe is a
-- tombstone that keeps only account_id, so the secret is gone with it). project_ids is a JSON array,
-- NULL for every project the account sees; events a JSON array. The secret is kept as given (whsec_...):
-- signing needs it, so it cannot be only a hash. It never leaves this file but as an HMAC.
CREATE TABLE webhooks (
  id           TEXT PRIMARY KEY,
  account_id   TEXT,
  project_ids  TEXT,
  url          TEXT,
  secret       TEXT,
  events       TEXT,
  deleted      INTEGER NOT NULL DEFAULT 0,
  v_at         TEXT NOT NULL,
  v_id         TEXT NOT NULL
);

-- The deliverer's own state, written by the process that delivers (not by the projector, not in the
-- digest: it depends on the wall clock).
--
-- webhook_tested: which closed periods of a project were tested for a subscription (once each).
CREATE TABLE webhook_tested (
  webhook_id  TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  end_date    TEXT NOT NULL,
  tested_at   TEXT NOT NULL,
  PRIMARY KEY (webhook_id, project_id, end_date)
) WITHOUT ROWID;

-- webhook_outbox: every message to send, written before the first attempt (a kill -9 loses none),
-- marked delivered only on a 2xx. message_id is the webhook-id header: the same on every retry, and
-- unique per subscription, so a signal is queued once.
--   status   pending | delivered | dead (gave up after the retry period, or refused: a URL not allowed)
CREATE TABLE webhook_outbox (
  seq              INTEGER PRIMARY KEY,
  message_id       TEXT NOT NULL UNIQUE,
  webhook_id       TEXT NOT NULL,
  project_id       TEXT NOT NULL,
  type             TEXT NOT NULL,
  payload          TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending',
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT NOT NULL,
  last_attempt_at  TEXT,
  last_result      TEXT,
  done_at          TEXT
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_attempt_at);
CREATE INDEX webhook_outbox_by_webhook ON webhook_outbox (webhook_id, seq);

-- data.changed: the last change-feed version queued per subscription and project, and when (at most
-- one message a minute a project).
CREATE TABLE webhook_feed (
  webhook_id  TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  version     INTEGER NOT NULL,
  queued_at   TEXT NOT NULL,
  PRIMARY KEY (webhook_id, project_id)
) WITHOUT ROWID;
