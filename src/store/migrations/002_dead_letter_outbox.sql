-- 002: dead letters from Kafka are also published to the DLQ topic (outbox pattern).
-- A dead letter is written in the same transaction as the batch that produced it; a publisher
-- sends the unpublished ones and then sets published_at, so a crash or a broker outage delays
-- the DLQ copy but never loses it (it may be sent twice: at-least-once).
-- Only rows whose source is 'kafka:<topic>:<partition>' are published; file-replay dead letters
-- keep published_at NULL and stay in the table only.
ALTER TABLE dead_letters ADD COLUMN published_at TEXT;

-- The publisher's query uses the same predicate, so this small partial index serves it.
CREATE INDEX dead_letters_unpublished ON dead_letters (id)
  WHERE published_at IS NULL AND source GLOB 'kafka:*';
