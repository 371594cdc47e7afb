-- 023: slice_days and slice_hits (migration 022) summed per month and country, in integer columns.
--
-- A year of slice_days is about a row per run (one run a pair a day, each naming its own dimensions):
-- signals, group_by and a filter on the country over a year read every one. These tables hold the
-- same sums per (project, month, engine, prompt, country): a pair's month is a row per country its
-- runs name (~5), not per day and combination (~30), so a range reads its whole months here and only
-- its ragged edges by day. Keyed by the country alone: signals sum per country, and the country is the
-- dimension with the fewest values per pair and month; a filter or group_by on the persona or model
-- still reads the days.
-- - month: the month's first day (YYYY-MM-01);
-- - country: the run's country as the dims row keeps it ('' when the run names none, or no dimension).
-- Kept by the writer with slice_days, in the same transaction and with the same moves (src/store/slice-sums.ts):
-- every month is the sum of its days whatever the batching, a row deleted when its runs fall to 0.
CREATE TABLE slice_months (
  project          INTEGER NOT NULL,
  month            TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  country          TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, month, engine, prompt, country)
) WITHOUT ROWID;

CREATE TABLE slice_month_hits (
  project          INTEGER NOT NULL,
  month            TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  country          TEXT NOT NULL,
  competitor       INTEGER NOT NULL,
  runs             INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, month, engine, prompt, country, competitor)
) WITHOUT ROWID;

INSERT INTO slice_months (project, month, engine, prompt, country, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, s.prompt, coalesce(d.country, ''),
    sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;

INSERT INTO slice_month_hits (project, month, engine, prompt, country, competitor, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, s.prompt, coalesce(d.country, ''), s.competitor,
    sum(s.runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_hits s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
