-- 005: aggregates move by exact deltas.
--
-- A new run adds its contribution to the rows of its bucket and a superseded run subtracts its old
-- one, so applying an event no longer re-reads its bucket (the cost stayed flat as a day filled).
-- Deltas only give the same bytes whatever the batching if addition is exact and order-free, so
-- the two float sums become fixed-point integers:
--   rr_fixed        = sum of round(232792560 / position): 232792560 is lcm(1..20), so 1/p is exact
--                     for every position up to 20 (and for 21, 22, 24, ...); the score divides it back.
--   sentiment_fixed = sum of round(sentiment * 1e6): sentiment to 6 decimals (analysers give 2-3).
-- A URL's title tie at one instant goes to the greater run id (title_run), as it did when buckets
-- were summed in id order.
-- Existing sums convert exactly (a float sum of such terms is within far less than 0.5 of the integer).

CREATE TABLE agg_prompt_day_new (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  runs             INTEGER NOT NULL,  -- succeeded runs
  brand_runs       INTEGER NOT NULL,  -- runs whose answer mentions the brand
  position_sum     INTEGER NOT NULL,  -- sum of best brand positions over brand_runs
  rr_fixed         INTEGER NOT NULL,  -- sum of 1/best position x 232792560
  sentiment_fixed  INTEGER NOT NULL,  -- sum of sentiments x 1e6
  sentiment_n      INTEGER NOT NULL,  -- brand_runs whose best mention carries a sentiment
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;
INSERT INTO agg_prompt_day_new
  SELECT project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum,
    CAST(round(rr_sum * 232792560) AS INTEGER), CAST(round(sentiment_sum * 1000000) AS INTEGER), sentiment_n
  FROM agg_prompt_day;
DROP TABLE agg_prompt_day;
ALTER TABLE agg_prompt_day_new RENAME TO agg_prompt_day;

CREATE TABLE agg_competitor_day_new (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,
  engine_id        TEXT NOT NULL,
  prompt_id        TEXT NOT NULL,
  competitor_id    TEXT NOT NULL,
  runs             INTEGER NOT NULL,  -- succeeded runs that mention this competitor
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;
INSERT INTO agg_competitor_day_new
  SELECT project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum,
    CAST(round(rr_sum * 232792560) AS INTEGER), CAST(round(sentiment_sum * 1000000) AS INTEGER), sentiment_n
  FROM agg_competitor_day;
DROP TABLE agg_competitor_day;
ALTER TABLE agg_competitor_day_new RENAME TO agg_competitor_day;

ALTER TABLE agg_url_day ADD COLUMN title_run TEXT;
UPDATE agg_url_day SET title_run = (
  SELECT max(r.id) FROM prompt_runs r, json_each(r.citations) c
  WHERE r.project_id = agg_url_day.project_id AND r.engine_id = agg_url_day.engine_id AND r.day = agg_url_day.day
    AND r.prompt_id = agg_url_day.prompt_id AND r.status = 'succeeded' AND r.completed_at = agg_url_day.title_at
    AND json_extract(c.value, '$.url') = agg_url_day.url AND json_extract(c.value, '$.title') IS NOT NULL
) WHERE title IS NOT NULL;

-- Nothing reads a whole bucket of runs any more: one b-tree fewer per run written. The rare
-- re-count of a URL row (a superseded run that cited it) reads the day through prompt_runs_recent.
DROP INDEX prompt_runs_bucket;
