-- 007: week and month roll-ups of the brand and competitor aggregates (date ranges of up to a year).
--
-- A date range of up to 366 days summed from day rows reads a year of rows per project (27k brand,
-- 60k competitor rows for 15 prompts x 5 engines): 50-100 ms, ten times the cold-build budget. The
-- same sums per ISO week and per calendar month let a range read its whole months and weeks as one
-- row each and only its ragged edges as days (src/readmodels/range-pieces.ts rangePieces).
--
-- Same columns and keys as the day tables; `day` is the period's first day: the Monday of the ISO
-- week, the 1st of the month. Every row is exactly the sum of the day rows of its period (integers:
-- the writer adds the same deltas in the same transaction, src/store/aggregates.ts), so a row with
-- runs = 0 is dropped as a day row is. Prompt and competitor stay keys: a deleted prompt or competitor
-- stops counting in a range as it does in a day.

CREATE TABLE agg_prompt_week (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,     -- Monday of the ISO week
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;

CREATE TABLE agg_prompt_month (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,     -- 1st of the month
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;

CREATE TABLE agg_competitor_week (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,     -- Monday of the ISO week
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  competitor_id    TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;

CREATE TABLE agg_competitor_month (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,     -- 1st of the month
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  competitor_id    TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;

-- strftime('%w') is 0 on Sunday: (w + 6) % 7 days back is the Monday.
INSERT INTO agg_prompt_week
  SELECT project_id, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS week, engine_id, prompt_id,
    sum(runs), sum(brand_runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_prompt_day GROUP BY project_id, week, engine_id, prompt_id;
INSERT INTO agg_prompt_month
  SELECT project_id, strftime('%Y-%m-01', day) AS month, engine_id, prompt_id,
    sum(runs), sum(brand_runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_prompt_day GROUP BY project_id, month, engine_id, prompt_id;
INSERT INTO agg_competitor_week
  SELECT project_id, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS week, engine_id, prompt_id, competitor_id,
    sum(runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_competitor_day GROUP BY project_id, week, engine_id, prompt_id, competitor_id;
INSERT INTO agg_competitor_month
  SELECT project_id, strftime('%Y-%m-01', day) AS month, engine_id, prompt_id, competitor_id,
    sum(runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_competitor_day GROUP BY project_id, month, engine_id, prompt_id, competitor_id;
