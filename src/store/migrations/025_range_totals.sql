-- 025: running totals per pair, so any range of days is two reads per pair, whatever its length.
--
-- A ranged report (visibility, segment-analytics, competitor-rankings, compare) sums each engine x
-- prompt over its days: from the week and month roll-ups (013: JSON lists of every pair, ~1.7 MB a
-- period decoded whole on a 300-prompt x 6-engine project) and the days of its ragged edges
-- (slice_days, 022: a row per pair a day). These tables hold, per pair and per day it has runs, the
-- sums of every day up to and including it: a range start..end is the pair's row on the last day
-- <= end minus its row on the last day < start (docs/decisions.md: the options measured).
-- - range_totals: per (project, engine, prompt, day) the succeeded runs and the brand's sums
--   (as slice_days, summed over the dimensions) of every day <= day;
-- - range_hit_totals: per (project, prompt, competitor, day) the competitor's sums (as slice_hits)
--   over every engine and dimension, of every day <= day. Over every engine: a report sums a
--   competitor per prompt, and a pair's key is 5x fewer reads than an engine's; a read that leaves
--   an engine out (a filter, an engine not counted) reads slice_hits instead.
-- Every succeeded run, whatever counts (as 022: the counting rule is the reader's). A row exists for a
-- day iff its key has runs (mentions) that day; the writer keeps them in the batch's transaction
-- (src/store/range-totals.ts), so the rows are the same whatever the batching.
CREATE TABLE range_totals (
  project          INTEGER NOT NULL,
  engine           INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  day              TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, engine, prompt, day)
) WITHOUT ROWID;

CREATE TABLE range_hit_totals (
  project          INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  competitor       INTEGER NOT NULL,
  day              TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, prompt, competitor, day)
) WITHOUT ROWID;

INSERT INTO range_totals (project, engine, prompt, day, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project, engine, prompt, day, sum(sum(runs)) OVER w, sum(sum(brand_runs)) OVER w, sum(sum(position_sum)) OVER w,
    sum(sum(rr_fixed)) OVER w, sum(sum(sentiment_fixed)) OVER w, sum(sum(sentiment_n)) OVER w
  FROM slice_days GROUP BY project, engine, prompt, day
  WINDOW w AS (PARTITION BY project, engine, prompt ORDER BY day) ORDER BY 1, 2, 3, 4;

INSERT INTO range_hit_totals (project, prompt, competitor, day, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project, prompt, competitor, day, sum(sum(runs)) OVER w, sum(sum(position_sum)) OVER w,
    sum(sum(rr_fixed)) OVER w, sum(sum(sentiment_fixed)) OVER w, sum(sum(sentiment_n)) OVER w
  FROM slice_hits GROUP BY project, prompt, competitor, day
  WINDOW w AS (PARTITION BY project, prompt, competitor ORDER BY day) ORDER BY 1, 2, 3, 4;
