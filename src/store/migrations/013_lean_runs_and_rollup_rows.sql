-- 013: the write path at full speed: a run's row as small as it can be, and each week's
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
--   citation), in order of first mention (citation), as src/store/run-store.ts makes them.
-- - A run's version is its event's (occurred_at, event_id): the same fact retried under a newer
--   event id replaces the event it keeps, which changes no data the API shows.
-- The view `prompt_runs` shows the runs with the columns they had (a reader's SQL, the tests, the digest).
--
-- Roll-ups. The week and month roll-ups were ~1.9 rows per run (agg_prompt_*, agg_competitor_*,
-- agg_cited_*, agg_cited_engine_*), each written with its own upsert when its period closed. Now a
-- project's period is one row of `rollups` holding the same rows as JSON lists, written once per
-- period (src/store/rollups.ts) and read whole by a range (src/readmodels/sums.ts). The ids and
-- URLs a period names are listed once per row; the lists refer to them by their place:
-- - ids: the engine, prompt and competitor ids, sorted (so a sorted list of places is a sorted list of ids);
-- - urls: [[url, domain], ...], sorted by URL;
-- - prompts: [[engine, prompt, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n], ...]
-- - competitors: [[engine, prompt, competitor, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n], ...]
-- - cited: [[url, runs, [engine, ...], [prompt, ...], first_at, last_at, title, title_at, title_day, title_engine, title_prompt, title_run], ...]
-- - cited_engines: [[url, engine, runs, [prompt, ...], first_at, last_at, title, title_at, title_day, title_prompt, title_run], ...]
-- each in key order. A title's bucket is its day, engine and prompt (title_day, the engine, title_prompt);
-- the title fields are null when no citation had a title. A period's row exists when any list holds a
-- row. The views of the old names show them as rows, column for column. The same rules as before
-- decide what is in them (migrations 007, 009).

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
  ids            TEXT NOT NULL,
  urls           TEXT NOT NULL,
  prompts        TEXT NOT NULL,
  competitors    TEXT NOT NULL,
  cited          TEXT NOT NULL,
  cited_engines  TEXT NOT NULL,
  UNIQUE (project_id, grain, day)
);

-- The rows of 007 and 009, period by period: first every id and URL each period names, numbered in
-- order (a period's lists name them by number), then the lists.
CREATE TEMP TABLE rollup_ids AS
  SELECT project_id, grain, day, id, row_number() OVER (PARTITION BY project_id, grain, day ORDER BY id) - 1 AS n FROM (
    SELECT project_id, 'week' AS grain, day, engine_id AS id FROM agg_prompt_week UNION SELECT project_id, 'week', day, prompt_id FROM agg_prompt_week
    UNION SELECT project_id, 'week', day, engine_id FROM agg_competitor_week UNION SELECT project_id, 'week', day, prompt_id FROM agg_competitor_week
    UNION SELECT project_id, 'week', day, competitor_id FROM agg_competitor_week UNION SELECT project_id, 'week', day, engine_id FROM agg_cited_engine_week
    UNION SELECT a.project_id, 'week', a.day, p.value FROM agg_cited_engine_week a, json_each('["' || replace(a.prompt_ids, ',', '","') || '"]') p
    UNION SELECT project_id, 'month', day, engine_id FROM agg_prompt_month UNION SELECT project_id, 'month', day, prompt_id FROM agg_prompt_month
    UNION SELECT project_id, 'month', day, engine_id FROM agg_competitor_month UNION SELECT project_id, 'month', day, prompt_id FROM agg_competitor_month
    UNION SELECT project_id, 'month', day, competitor_id FROM agg_competitor_month UNION SELECT project_id, 'month', day, engine_id FROM agg_cited_engine_month
    UNION SELECT a.project_id, 'month', a.day, p.value FROM agg_cited_engine_month a, json_each('["' || replace(a.prompt_ids, ',', '","') || '"]') p);
CREATE INDEX temp.rollup_ids_by_id ON rollup_ids (project_id, grain, day, id);
CREATE TEMP TABLE rollup_urls AS
  SELECT project_id, grain, day, url, domain, row_number() OVER (PARTITION BY project_id, grain, day ORDER BY url) - 1 AS n FROM (
    SELECT project_id, 'week' AS grain, day, url, min(domain) AS domain FROM agg_cited_engine_week GROUP BY 1, 2, 3, 4
    UNION ALL SELECT project_id, 'month', day, url, min(domain) FROM agg_cited_engine_month GROUP BY 1, 2, 3, 4);
CREATE INDEX temp.rollup_urls_by_url ON rollup_urls (project_id, grain, day, url);

-- The number of an id (a URL) in its period.
CREATE TEMP VIEW id_n AS SELECT project_id, grain, day, id, n FROM rollup_ids;
CREATE TEMP VIEW url_n AS SELECT project_id, grain, day, url, n FROM rollup_urls;

CREATE TEMP TABLE rollup_periods AS
  SELECT DISTINCT project_id, grain, day FROM (SELECT project_id, grain, day FROM rollup_ids UNION SELECT project_id, grain, day FROM rollup_urls);

INSERT INTO rollups (project_id, grain, day, ids, urls, prompts, competitors, cited, cited_engines)
  SELECT k.project_id, k.grain, k.day,
    (SELECT json_group_array(i.id ORDER BY i.n) FROM rollup_ids i WHERE i.project_id = k.project_id AND i.grain = k.grain AND i.day = k.day),
    (SELECT json_group_array(json_array(u.url, u.domain) ORDER BY u.n) FROM rollup_urls u WHERE u.project_id = k.project_id AND u.grain = k.grain AND u.day = k.day),
    '[]', '[]', '[]', '[]'
  FROM rollup_periods k ORDER BY k.project_id, k.grain, k.day;

-- A number of the period `r`'s ids; a sorted list of the numbers of a sorted comma-separated list.
CREATE TEMP TABLE agg_prompt AS SELECT 'week' AS grain, * FROM agg_prompt_week UNION ALL SELECT 'month', * FROM agg_prompt_month;
CREATE TEMP TABLE agg_competitor AS SELECT 'week' AS grain, * FROM agg_competitor_week UNION ALL SELECT 'month', * FROM agg_competitor_month;
CREATE TEMP TABLE agg_cited AS SELECT 'week' AS grain, * FROM agg_cited_week UNION ALL SELECT 'month', * FROM agg_cited_month;
CREATE TEMP TABLE agg_cited_engine AS SELECT 'week' AS grain, * FROM agg_cited_engine_week UNION ALL SELECT 'month', * FROM agg_cited_engine_month;
-- Each period's rows found by its key, in the order of its list (without these, every period scanned
-- the whole table: a migration's time grew with the square of the history).
CREATE INDEX temp.agg_prompt_in_period ON agg_prompt (project_id, grain, day, engine_id, prompt_id);
CREATE INDEX temp.agg_competitor_in_period ON agg_competitor (project_id, grain, day, engine_id, prompt_id, competitor_id);
CREATE INDEX temp.agg_cited_in_period ON agg_cited (project_id, grain, day, url);
CREATE INDEX temp.agg_cited_engine_in_period ON agg_cited_engine (project_id, grain, day, url, engine_id);

UPDATE rollups SET prompts = coalesce((
  SELECT json_group_array(json_array(e.n, q.n, a.runs, a.brand_runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n) ORDER BY a.engine_id, a.prompt_id)
  FROM (SELECT * FROM agg_prompt a WHERE a.project_id = rollups.project_id AND a.grain = rollups.grain AND a.day = rollups.day) a
    JOIN id_n e ON e.project_id = a.project_id AND e.grain = a.grain AND e.day = a.day AND e.id = a.engine_id
    JOIN id_n q ON q.project_id = a.project_id AND q.grain = a.grain AND q.day = a.day AND q.id = a.prompt_id), '[]');
UPDATE rollups SET competitors = coalesce((
  SELECT json_group_array(json_array(e.n, q.n, c.n, a.runs, a.position_sum, a.rr_fixed, a.sentiment_fixed, a.sentiment_n) ORDER BY a.engine_id, a.prompt_id, a.competitor_id)
  FROM (SELECT * FROM agg_competitor a WHERE a.project_id = rollups.project_id AND a.grain = rollups.grain AND a.day = rollups.day) a
    JOIN id_n e ON e.project_id = a.project_id AND e.grain = a.grain AND e.day = a.day AND e.id = a.engine_id
    JOIN id_n q ON q.project_id = a.project_id AND q.grain = a.grain AND q.day = a.day AND q.id = a.prompt_id
    JOIN id_n c ON c.project_id = a.project_id AND c.grain = a.grain AND c.day = a.day AND c.id = a.competitor_id), '[]');
UPDATE rollups SET cited = coalesce((
  SELECT json_group_array(json_array(u.n, a.runs,
      (SELECT json_group_array(i.n ORDER BY i.n) FROM json_each('["' || replace(a.engine_ids, ',', '","') || '"]') v
        JOIN id_n i ON i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = v.value),
      (SELECT json_group_array(i.n ORDER BY i.n) FROM json_each('["' || replace(a.prompt_ids, ',', '","') || '"]') v
        JOIN id_n i ON i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = v.value),
      a.first_at, a.last_at, a.title, a.title_at,
      CASE WHEN a.title IS NULL THEN NULL ELSE substr(a.title_bucket, 1, 10) END,
      (SELECT i.n FROM id_n i WHERE i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = substr(a.title_bucket, 12, 36)),
      (SELECT i.n FROM id_n i WHERE i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = substr(a.title_bucket, 49)),
      CASE WHEN a.title IS NULL THEN NULL ELSE a.title_run END) ORDER BY a.url)
  FROM (SELECT * FROM agg_cited a WHERE a.project_id = rollups.project_id AND a.grain = rollups.grain AND a.day = rollups.day) a
    JOIN url_n u ON u.project_id = a.project_id AND u.grain = a.grain AND u.day = a.day AND u.url = a.url), '[]');
UPDATE rollups SET cited_engines = coalesce((
  SELECT json_group_array(json_array(u.n, e.n, a.runs,
      (SELECT json_group_array(i.n ORDER BY i.n) FROM json_each('["' || replace(a.prompt_ids, ',', '","') || '"]') v
        JOIN id_n i ON i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = v.value),
      a.first_at, a.last_at, a.title, a.title_at,
      CASE WHEN a.title IS NULL THEN NULL ELSE substr(a.title_bucket, 1, 10) END,
      (SELECT i.n FROM id_n i WHERE i.project_id = a.project_id AND i.grain = a.grain AND i.day = a.day AND i.id = substr(a.title_bucket, 49)),
      CASE WHEN a.title IS NULL THEN NULL ELSE a.title_run END) ORDER BY a.url, a.engine_id)
  FROM (SELECT * FROM agg_cited_engine a WHERE a.project_id = rollups.project_id AND a.grain = rollups.grain AND a.day = rollups.day) a
    JOIN url_n u ON u.project_id = a.project_id AND u.grain = a.grain AND u.day = a.day AND u.url = a.url
    JOIN id_n e ON e.project_id = a.project_id AND e.grain = a.grain AND e.day = a.day AND e.id = a.engine_id), '[]');

DROP VIEW temp.id_n;
DROP VIEW temp.url_n;
DROP TABLE temp.rollup_ids;
DROP TABLE temp.rollup_urls;
DROP TABLE temp.rollup_periods;
DROP TABLE temp.agg_prompt;
DROP TABLE temp.agg_competitor;
DROP TABLE temp.agg_cited;
DROP TABLE temp.agg_cited_engine;

DROP TABLE agg_prompt_week;
DROP TABLE agg_prompt_month;
DROP TABLE agg_competitor_week;
DROP TABLE agg_competitor_month;
DROP TABLE agg_cited_week;
DROP TABLE agg_cited_month;
DROP TABLE agg_cited_engine_week;
DROP TABLE agg_cited_engine_month;

CREATE VIEW agg_prompt_week AS
  SELECT r.project_id, r.day, r.ids ->> (j.value ->> 0) AS engine_id, r.ids ->> (j.value ->> 1) AS prompt_id, j.value ->> 2 AS runs,
    j.value ->> 3 AS brand_runs, j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.prompts) j WHERE r.grain = 'week';
CREATE VIEW agg_competitor_week AS
  SELECT r.project_id, r.day, r.ids ->> (j.value ->> 0) AS engine_id, r.ids ->> (j.value ->> 1) AS prompt_id, r.ids ->> (j.value ->> 2) AS competitor_id,
    j.value ->> 3 AS runs, j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.competitors) j WHERE r.grain = 'week';
CREATE VIEW agg_cited_week AS
  SELECT r.project_id, r.day, r.urls -> (j.value ->> 0) ->> 0 AS url, r.urls -> (j.value ->> 0) ->> 1 AS domain, j.value ->> 1 AS runs,
    (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 2) v) AS engine_ids,
    (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 3) v) AS prompt_ids,
    j.value ->> 4 AS first_at, j.value ->> 5 AS last_at, j.value ->> 6 AS title, j.value ->> 7 AS title_at,
    j.value ->> 8 || ' ' || (r.ids ->> (j.value ->> 9)) || ' ' || (r.ids ->> (j.value ->> 10)) AS title_bucket, j.value ->> 11 AS title_run
  FROM rollups r, json_each(r.cited) j WHERE r.grain = 'week';
CREATE VIEW agg_cited_engine_week AS
  SELECT r.project_id, r.day, r.urls -> (j.value ->> 0) ->> 0 AS url, r.ids ->> (j.value ->> 1) AS engine_id, r.urls -> (j.value ->> 0) ->> 1 AS domain,
    j.value ->> 2 AS runs, (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 3) v) AS prompt_ids,
    j.value ->> 4 AS first_at, j.value ->> 5 AS last_at, j.value ->> 6 AS title, j.value ->> 7 AS title_at,
    j.value ->> 8 || ' ' || (r.ids ->> (j.value ->> 1)) || ' ' || (r.ids ->> (j.value ->> 9)) AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited_engines) j WHERE r.grain = 'week';
CREATE VIEW agg_prompt_month AS
  SELECT r.project_id, r.day, r.ids ->> (j.value ->> 0) AS engine_id, r.ids ->> (j.value ->> 1) AS prompt_id, j.value ->> 2 AS runs,
    j.value ->> 3 AS brand_runs, j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.prompts) j WHERE r.grain = 'month';
CREATE VIEW agg_competitor_month AS
  SELECT r.project_id, r.day, r.ids ->> (j.value ->> 0) AS engine_id, r.ids ->> (j.value ->> 1) AS prompt_id, r.ids ->> (j.value ->> 2) AS competitor_id,
    j.value ->> 3 AS runs, j.value ->> 4 AS position_sum, j.value ->> 5 AS rr_fixed, j.value ->> 6 AS sentiment_fixed, j.value ->> 7 AS sentiment_n
  FROM rollups r, json_each(r.competitors) j WHERE r.grain = 'month';
CREATE VIEW agg_cited_month AS
  SELECT r.project_id, r.day, r.urls -> (j.value ->> 0) ->> 0 AS url, r.urls -> (j.value ->> 0) ->> 1 AS domain, j.value ->> 1 AS runs,
    (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 2) v) AS engine_ids,
    (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 3) v) AS prompt_ids,
    j.value ->> 4 AS first_at, j.value ->> 5 AS last_at, j.value ->> 6 AS title, j.value ->> 7 AS title_at,
    j.value ->> 8 || ' ' || (r.ids ->> (j.value ->> 9)) || ' ' || (r.ids ->> (j.value ->> 10)) AS title_bucket, j.value ->> 11 AS title_run
  FROM rollups r, json_each(r.cited) j WHERE r.grain = 'month';
CREATE VIEW agg_cited_engine_month AS
  SELECT r.project_id, r.day, r.urls -> (j.value ->> 0) ->> 0 AS url, r.ids ->> (j.value ->> 1) AS engine_id, r.urls -> (j.value ->> 0) ->> 1 AS domain,
    j.value ->> 2 AS runs, (SELECT group_concat(r.ids ->> v.value, ',') FROM json_each(j.value -> 3) v) AS prompt_ids,
    j.value ->> 4 AS first_at, j.value ->> 5 AS last_at, j.value ->> 6 AS title, j.value ->> 7 AS title_at,
    j.value ->> 8 || ' ' || (r.ids ->> (j.value ->> 1)) || ' ' || (r.ids ->> (j.value ->> 9)) AS title_bucket, j.value ->> 10 AS title_run
  FROM rollups r, json_each(r.cited_engines) j WHERE r.grain = 'month';
