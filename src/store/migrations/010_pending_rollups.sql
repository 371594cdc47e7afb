-- 010: week and month periods whose roll-up rows a bulk writer has not brought up to date yet
-- (issue 11: the write path).
--
-- A replay ordered by day wrote every week row 7 times and every month row ~30 times (once per
-- batch of each day), and those upserts were about half of all it wrote. A bulk writer (replay, a
-- Kafka consumer catching up) now writes the day rows only and marks the periods of its days here,
-- in the same transaction. A period it has moved past (a later period of the same project is marked)
-- is counted again from its day rows once (src/store/rollups.ts), and so is every marked period when
-- the writer ends or catches up, or when any writer starts a batch that is not bulk.
--
-- Readers never read the roll-up rows of a marked period: they read its days instead
-- (src/readmodels/formulas.ts rangePieces), which give the same sums, so an answer is the same
-- bytes whether the period is marked or not. The digest is the same once nothing is marked.
CREATE TABLE rollup_pending (
  project_id  TEXT NOT NULL,
  grain       TEXT NOT NULL CHECK (grain IN ('week', 'month')),
  day         TEXT NOT NULL,     -- the period's first day (Monday of the ISO week, 1st of the month)
  PRIMARY KEY (project_id, grain, day)
) WITHOUT ROWID;
