-- 014: the key that signs page cursors (src/serve/request/cursor.ts: HMAC-SHA256 over each cursor), 32
-- random bytes made once per database. It is kept with the data so that every thread and process
-- serving this file, and every replica bootstrapped from a snapshot of it, sign and check cursors
-- with the same key. `serve --cursor-secret` replaces it (replicas that each build their own
-- database from Kafka: docs/operations.md). Not read-model data: the digest leaves it out, so
-- two databases of the same events have the same digest whatever their keys.
CREATE TABLE cursor_secret (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  secret BLOB NOT NULL CHECK (length(secret) = 32)
);
INSERT INTO cursor_secret (id, secret) VALUES (1, randomblob(32));
