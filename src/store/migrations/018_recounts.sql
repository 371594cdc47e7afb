-- 018: a change of what counts is counted again a slice at a time.
--
-- A prompt deleted, restored or moved, a competitor deleted or restored, or an engine first seen after
-- its runs changes which of a project's stored runs count. Its engine-day rows (and, for a prompt or
-- an engine, its cited-URL roll-ups) were counted again from every stored run in the batch of the
-- change: ~0.24 s for a year of daily runs, a batch every other project waited for. Now the batch
-- only lists the project here; each later batch (and a writer's settle) counts a slice of its days
-- and periods again, from `next_day` on, and the row goes when the last slice is done. Until then the
-- readers of a listed project read its days and periods from the runs (never from the rows being
-- counted again), which give the same bytes (src/readmodels/range-pieces.ts, sums.ts).
-- Bookkeeping: the digest reads none of it (a settled writer leaves it empty).
CREATE TABLE recounts (
  project_id  TEXT PRIMARY KEY,
  cited       INTEGER NOT NULL,  -- 1: the roll-ups too (a prompt or an engine changed), 0: engine-day rows only
  next_day    TEXT NOT NULL       -- the first day (and period start) not counted again yet
) WITHOUT ROWID;
