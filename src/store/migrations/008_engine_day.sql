-- 008: the counted brand and competitor sums per project, day and engine, without the prompt
-- (cold builds of the trend and the daily scores over a year).
--
-- The trend and the daily scores answer one point per day (or week, or month) and engine. From
-- agg_prompt_day and agg_competitor_day a year of a busy project is ~27k + ~60k rows to add up
-- (15 prompts x 5 engines), most of a 35 ms build; here it is 1,825 rows.
--
-- Only what counts is in these rows: runs of the project's non-deleted prompts on known engines
-- (COUNTED_RUNS in src/readmodels/counted-runs.ts), and in `competitor_runs` the mentions of its
-- tracked (non-deleted) competitors by those runs. So a row is the exact sum of its day's counted
-- rows by prompt. The writer adds the same deltas in the same transaction as those rows, and counts
-- a project again when what counts changes (a prompt or competitor deleted, restored or moved, an
-- engine first seen after its runs: src/store/aggregates.ts). A row whose runs fall to 0 goes.

CREATE TABLE agg_engine_day (
  project_id       TEXT NOT NULL,
  day              TEXT NOT NULL,
  engine_id        TEXT NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  competitor_runs  INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id)
) WITHOUT ROWID;

INSERT INTO agg_engine_day
  SELECT p.project_id, p.day, p.engine_id, sum(p.runs), sum(p.brand_runs), sum(p.position_sum), sum(p.rr_fixed),
    sum(p.sentiment_fixed), sum(p.sentiment_n),
    coalesce((SELECT sum(c.runs) FROM agg_competitor_day c
      WHERE c.project_id = p.project_id AND c.day = p.day AND c.engine_id = p.engine_id
        AND EXISTS (SELECT 1 FROM prompts q WHERE q.id = c.prompt_id AND q.project_id = c.project_id AND q.deleted = 0)
        AND EXISTS (SELECT 1 FROM competitors k WHERE k.id = c.competitor_id AND k.project_id = c.project_id AND k.deleted = 0)), 0)
  FROM agg_prompt_day p
  WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = p.prompt_id AND q.project_id = p.project_id AND q.deleted = 0)
    AND EXISTS (SELECT 1 FROM engines e WHERE e.id = p.engine_id)
  GROUP BY p.project_id, p.day, p.engine_id;
