-- 010: week and month periods whose roll-up rows a bulk writer has not brought up to date yet
-- (a faster write path).
--
-- A replay ordered by day wrote every week row 7 times and every month row ~30 times (once per
-- batch of each day), and those upserts were about half of all it wrote. A bulk writer (replay, a
-- Kafka consumer catching up) now leaves the roll-up rows of the latest period of each project and
-- grain it writes (the frontier) as they are, stale, and marks it here, in the same transaction; once its batches
-- have moved past it (a later period of that project), it is counted again from its day rows, once
-- (src/store/rollups.ts). Other periods move by their deltas as before. So a project has at most one
-- week and one month marked, and they are counted again when the writer ends or catches up, or when
-- any writer starts a batch that is not bulk.
--
-- Readers never read the roll-up rows of a marked period: they read its days instead
-- (src/readmodels/range-pieces.ts rangePieces), which give the same sums, so an answer is the same
-- bytes whether the period is marked or not. The digest is the same once nothing is marked.
CREATE TABLE rollup_pending (
  project_id  TEXT NOT NULL,
  grain       TEXT NOT NULL CHECK (grain IN ('week', 'month')),
  day         TEXT NOT NULL,     -- the period's first day (Monday of the ISO week, 1st of the month)
  PRIMARY KEY (project_id, grain, day)
) WITHOUT ROWID;
