-- 026: the sums of slice_days (migration 022) per engine and one dimension's value, without the prompt.
--
-- A group_by by a dimension (country, persona, model) or by a period read the sums per pair of every
-- day or month of its range (slice_days, slice_months: ~600k and ~110k rows a year on a 300-prompt x
-- 6-engine project) and added them per value. These tables hold those additions: per (project, day
-- or month, engine, dimension, value) the succeeded runs and the brand's sums, so a year grouped by
-- country is ~12 month rows per engine and value plus the ragged days, whatever the prompts.
-- - dimension: 0 for every run (value ''), 1 country, 2 persona, 3 model;
-- - value: the run's value as the dims row keeps it ('' when the run names none, or no dimension).
-- The counting rule (non-deleted prompts of the project, known engines) is the reader's, as for
-- slice_days: the engine is in the key; the prompt is not, so a reader takes away the sums of the few
-- prompts with runs that do not count (their slice_days rows; which prompts a project's runs name is
-- in run_refs, migration 011).
-- Kept by the writer with slice_days in the same transaction and with the same moves
-- (src/store/slice-values.ts): a row is deleted when its runs fall to 0, so the rows are the same
-- whatever the batching. Keyed by the dimension before the day: a read takes one dimension's rows of a
-- range, together.
CREATE TABLE slice_values (
  project          INTEGER NOT NULL,
  day              TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  dimension        INTEGER NOT NULL,
  value            TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, dimension, day, engine, value)
) WITHOUT ROWID;

CREATE TABLE slice_value_months (
  project          INTEGER NOT NULL,
  month            TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  dimension        INTEGER NOT NULL,
  value            TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, dimension, month, engine, value)
) WITHOUT ROWID;

-- Filled from slice_days, one dimension at a time.
INSERT INTO slice_values (project, day, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, s.day, s.engine, 0, '', sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_values (project, day, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, s.day, s.engine, 1, coalesce(d.country, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_values (project, day, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, s.day, s.engine, 2, coalesce(d.persona, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_values (project, day, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, s.day, s.engine, 3, coalesce(d.model, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_value_months (project, month, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, 0, '', sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_value_months (project, month, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, 1, coalesce(d.country, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_value_months (project, month, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, 2, coalesce(d.persona, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;

INSERT INTO slice_value_months (project, month, engine, dimension, value, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT s.project, substr(s.day, 1, 8) || '01', s.engine, 3, coalesce(d.model, ''), sum(s.runs), sum(s.brand_runs), sum(s.position_sum), sum(s.rr_fixed), sum(s.sentiment_fixed), sum(s.sentiment_n)
  FROM slice_days s LEFT JOIN dims d ON d.n = s.dims
  GROUP BY 1, 4, 2, 3, 5 ORDER BY 1, 4, 2, 3, 5;
