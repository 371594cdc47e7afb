-- 013: the write path at full speed (issue 11): a run's row as small as it can be, and each week's
-- and month's roll-ups as one row.
--
-- Runs. A run's row was 17 columns with two secondary indexes on text keys (project_id, completed_at,
-- id: ~100 bytes an entry; run_group_id, id), and those indexes were most of what a replay wrote: each
-- commit dirtied their pages at every project's place, and the WAL took them whole. Now:
-- - `runs` keeps what is looked up by SQL as columns, the project and the run group by a small number
--   (`keys`), and what the read models take of a run as one JSON array (`facts`) beside the event as
--   received (`event`);
-- - its indexes are (project, completed_at) and (run_group): 10-30 bytes an entry.
-- - facts = [engine_id, prompt_id, brand_position, brand_sentiment, mention_count, citation_count,
--   hits, cited] where hits = [[competitor_id, position, sentiment], ...] (each competitor once, at its
--   best position) and cited = [[url, title], ...] (each URL once, with the title of its first titled
--   citation), in order of first mention (citation), as src/store/runs.ts makes them.
-- - A run's version is its event's (occurred_at, event_id): the same fact retried under a newer
--   event id replaces the event it keeps, which changes no data the API shows.
-- The view `prompt_runs` shows the runs with the columns they had (a reader's SQL, the tests, the digest).
--
-- Roll-ups. The week and month roll-ups were ~1.9 rows per run (agg_prompt_*, agg_competitor_*,
-- agg_cited_*, agg_cited_engine_*), each written with its own upsert when its period closed. Now a
-- project's period is one row of `rollups` holding the same rows as four JSON arrays, written once
-- per period (src/store/rollups.ts) and read whole by a range (src/readmodels/formulas.ts). The
-- views of the old names show them as rows, column for column:
-- - prompts: [[engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n], ...]
-- - competitors: [[engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n], ...]
-- - cited: [[url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run], ...]
-- - cited_engines: [[url, engine_id, domain, runs, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run], ...]
-- each in key order (engine, prompt[, competitor]; url[, engine]). A period's row exists when any of
-- the four holds a row. The same rules as before decide what is in them (migrations 007, 009).

-- Small numbers for the ids the runs' indexes key by (projects, run groups). Numbers are given as ids
-- are first seen and mean nothing else: nothing the API shows or the digest reads depends on them.
CREATE TABLE keys (
  n   INTEGER PRIMARY KEY,
  id  TEXT NOT NULL UNIQUE
);
INSERT INTO keys (id) SELECT id FROM (SELECT project_id AS id FROM prompt_runs UNION SELECT run_group_id FROM prompt_runs) ORDER BY id;

CREATE TABLE runs (
  project       INTEGER NOT NULL,  -- keys.n of the run's project_id
  completed_at  TEXT NOT NULL,     -- UTC ISO, as decoded (the event may give another offset)
  run_group     INTEGER NOT NULL,  -- keys.n of the run's run_group_id
  status        TEXT NOT NULL,     -- succeeded | failed
  id            TEXT NOT NULL,
  facts         TEXT NOT NULL,     -- JSON, see above
  event         TEXT NOT NULL      -- the prompt_run.completed event as received (JSON)
);
-- The rows keep their rowids: run_ids (migration 011) refers to them. A row whose version was moved
-- by a retry of the same fact keeps that version in its event's envelope.
INSERT INTO runs (rowid, project, completed_at, run_group, status, id, facts, event)
  SELECT r.rowid, p.n, r.completed_at, g.n, r.status, r.id,
    json_array(r.engine_id, r.prompt_id, r.brand_position, r.brand_sentiment, r.mention_count, r.citation_count, json(r.hits), json(r.cited)),
    CASE WHEN r.event ->> '$.event_id' = r.v_id THEN r.event ELSE json_set(r.event, '$.occurred_at', r.v_at, '$.event_id', r.v_id) END
  FROM prompt_runs r JOIN keys p ON p.id = r.project_id JOIN keys g ON g.id = r.run_group_id
  ORDER BY r.rowid;
DROP TABLE prompt_runs;
CREATE INDEX runs_recent ON runs (project, completed_at);
CREATE INDEX runs_by_group ON runs (run_group);

CREATE VIEW prompt_runs AS
  SELECT r.id, g.id AS run_group_id, p.id AS project_id, r.facts ->> 1 AS prompt_id, r.facts ->> 0 AS engine_id, r.status,
    r.completed_at, substr(r.completed_at, 1, 10) AS day, r.facts ->> 2 AS brand_position, r.facts ->> 3 AS brand_sentiment,
    r.facts ->> 4 AS mention_count, r.facts ->> 5 AS citation_count, r.event, r.facts -> 6 AS hits, r.facts -> 7 AS cited
  FROM runs r JOIN keys p ON p.n = r.project JOIN keys g ON g.n = r.run_group;

CREATE TABLE rollups (
  project_id     TEXT NOT NULL,
  grain          TEXT NOT NULL CHECK (grain IN ('week', 'month')),
  day            TEXT NOT NULL,    -- the period's first day (Monday of the ISO week, 1st of the month)
  prompts        TEXT NOT NULL,
  competitors    TEXT NOT NULL,
  cited          TEXT NOT NULL,
  cited_engines  TEXT NOT NULL,
  UNIQUE (project_id, grain, day)
);

INSERT INTO rollups (project_id, grain, day, prompts, competitors, cited, cited_engines)
  SELECT k.project_id, k.grain, k.day,
    coalesce((SELECT json_group_array(json_array(a.engine_id, a.prompt_id, a.runs, a.brand_runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n)
      ORDER BY a.engine_id, a.prompt_id) FROM agg_prompt_week a WHERE k.grain = 'week' AND a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.engine_id, a.prompt_id, a.competitor_id, a.runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n)
      ORDER BY a.engine_id, a.prompt_id, a.competitor_id) FROM agg_competitor_week a WHERE k.grain = 'week' AND a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.url, a.domain, a.runs, a.engine_ids, a.prompt_ids, a.first_at, a.last_at, a.title, a.title_at, a.title_bucket, a.title_run)
      ORDER BY a.url) FROM agg_cited_week a WHERE k.grain = 'week' AND a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.url, a.engine_id, a.domain, a.runs, a.prompt_ids, a.first_at, a.last_at, a.title, a.title_at, a.title_bucket, a.title_run)
      ORDER BY a.url, a.engine_id) FROM agg_cited_engine_week a WHERE k.grain = 'week' AND a.project_id = k.project_id AND a.day = k.day), '[]')
  FROM (SELECT project_id, 'week' AS grain, day FROM agg_prompt_week UNION SELECT project_id, 'week', day FROM agg_competitor_week
    UNION SELECT project_id, 'week', day FROM agg_cited_week UNION SELECT project_id, 'week', day FROM agg_cited_engine_week) k
  ORDER BY k.project_id, k.day;
INSERT INTO rollups (project_id, grain, day, prompts, competitors, cited, cited_engines)
  SELECT k.project_id, k.grain, k.day,
    coalesce((SELECT json_group_array(json_array(a.engine_id, a.prompt_id, a.runs, a.brand_runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n)
      ORDER BY a.engine_id, a.prompt_id) FROM agg_prompt_month a WHERE a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.engine_id, a.prompt_id, a.competitor_id, a.runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n)
      ORDER BY a.engine_id, a.prompt_id, a.competitor_id) FROM agg_competitor_month a WHERE a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.url, a.domain, a.runs, a.engine_ids, a.prompt_ids, a.first_at, a.last_at, a.title, a.title_at, a.title_bucket, a.title_run)
      ORDER BY a.url) FROM agg_cited_month a WHERE a.project_id = k.project_id AND a.day = k.day), '[]'),
    coalesce((SELECT json_group_array(json_array(a.url, a.engine_id, a.domain, a.runs, a.prompt_ids, a.first_at, a.last_at, a.title, a.title_at, a.title_bucket, a.title_run)
      ORDER BY a.url, a.engine_id) FROM agg_cited_engine_month a WHERE a.project_id = k.project_id AND a.day = k.day), '[]')
  FROM (SELECT project_id, 'month' AS grain, day FROM agg_prompt_month UNION SELECT project_id, 'month', day FROM agg_competitor_month
    UNION SELECT project_id, 'month', day FROM agg_cited_month UNION SELECT project_id, 'month', day FROM agg_cited_engine_month) k
  ORDER BY k.project_id, k.day;

DROP TABLE agg_prompt_week;
DROP TABLE agg_prompt_month;
DROP TABLE agg_competitor_week;
DROP TABLE agg_competitor_month;
DROP TABLE agg_cited_week;
DROP TABLE agg_cited_month;
DROP TABLE agg_cited_engine_week;
DROP TABLE agg_cited_engine_month;

CREATE VIEW agg_prompt_week AS
  SELECT r.project_id, r.day, j.value ->> 0 AS engine_id, j.value ->> 1 AS prompt_id, j.value ->> 2 AS runs, j.value ->> 3 AS brand_runs,
    j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.prompts) j WHERE r.grain = 'week';
CREATE VIEW agg_prompt_month AS
  SELECT r.project_id, r.day, j.value ->> 0 AS engine_id, j.value ->> 1 AS prompt_id, j.value ->> 2 AS runs, j.value ->> 3 AS brand_runs,
    j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.prompts) j WHERE r.grain = 'month';
CREATE VIEW agg_competitor_week AS
  SELECT r.project_id, r.day, j.value ->> 0 AS engine_id, j.value ->> 1 AS prompt_id, j.value ->> 2 AS competitor_id, j.value ->> 3 AS runs,
    j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.competitors) j WHERE r.grain = 'week';
CREATE VIEW agg_competitor_month AS
  SELECT r.project_id, r.day, j.value ->> 0 AS engine_id, j.value ->> 1 AS prompt_id, j.value ->> 2 AS competitor_id, j.value ->> 3 AS runs,
    j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.competitors) j WHERE r.grain = 'month';
CREATE VIEW agg_cited_week AS
  SELECT r.project_id, r.day, j.value ->> 0 AS url, j.value ->> 1 AS domain, j.value ->> 2 AS runs, j.value ->> 3 AS engine_ids,
    j.value ->> 4 AS prompt_ids, j.value ->> 5 AS first_at, j.value ->> 6 AS last_at, j.value ->> 7 AS title, j.value ->> 8 AS title_at,
    j.value ->> 9 AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited) j WHERE r.grain = 'week';
CREATE VIEW agg_cited_month AS
  SELECT r.project_id, r.day, j.value ->> 0 AS url, j.value ->> 1 AS domain, j.value ->> 2 AS runs, j.value ->> 3 AS engine_ids,
    j.value ->> 4 AS prompt_ids, j.value ->> 5 AS first_at, j.value ->> 6 AS last_at, j.value ->> 7 AS title, j.value ->> 8 AS title_at,
    j.value ->> 9 AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited) j WHERE r.grain = 'month';
CREATE VIEW agg_cited_engine_week AS
  SELECT r.project_id, r.day, j.value ->> 0 AS url, j.value ->> 1 AS engine_id, j.value ->> 2 AS domain, j.value ->> 3 AS runs,
    j.value ->> 4 AS prompt_ids, j.value ->> 5 AS first_at, j.value ->> 6 AS last_at, j.value ->> 7 AS title, j.value ->> 8 AS title_at,
    j.value ->> 9 AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited_engines) j WHERE r.grain = 'week';
CREATE VIEW agg_cited_engine_month AS
  SELECT r.project_id, r.day, j.value ->> 0 AS url, j.value ->> 1 AS engine_id, j.value ->> 2 AS domain, j.value ->> 3 AS runs,
    j.value ->> 4 AS prompt_ids, j.value ->> 5 AS first_at, j.value ->> 6 AS last_at, j.value ->> 7 AS title, j.value ->> 8 AS title_at,
    j.value ->> 9 AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited_engines) j WHERE r.grain = 'month';
