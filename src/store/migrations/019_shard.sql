-- 019: which shard of the events topics this database holds.
--
-- `serve --shard K/N` consumes the partitions p with p % N = K of the events topics, of
-- `partitions` in all, and keeps only the projects whose id the producer's partitioner puts there
-- (src/lib/partition.ts). No row: the whole of every topic (an unsharded service, or a file replay).
-- The row travels with a snapshot, so a replica bootstrapped from a peer knows what it holds, and a
-- snapshot of another shard is refused (src/ingest/bootstrap.ts).
CREATE TABLE shard (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  k           INTEGER NOT NULL CHECK (k >= 0 AND k < n),
  n           INTEGER NOT NULL CHECK (n >= 1),
  partitions  INTEGER NOT NULL CHECK (partitions >= n)
);
