-- An independent oracle for the aggregates: every row computed from the stored runs by SQL in one
-- pass per table, where src/store/aggregates.ts and rollups.ts add them up in JavaScript, batch by
-- batch. test/store/aggregate-deltas.test.ts replaces the tables with these (the roll-ups: temporary tables in place
-- of their views) and expects the same digest. Rounding is SQLite's round() (half away from zero),
-- which is what rrFixed and sentimentFixed do in JavaScript. A run's mentions and
-- citations are read from its event as stored; domain_of(url) is src/store/run-store.ts domainOf, which the
-- caller registers (test/helpers/oracle-aggregates.ts oracleAggregates): SQL has no URL parser.

DELETE FROM agg_run_group;
DELETE FROM agg_engine_day;

-- The roll-ups are views of the rollups table (migration 013): the oracle's rows go in temporary tables
-- of the same names and columns, which this connection then reads in their place (temp comes first).
DROP TABLE IF EXISTS temp.agg_prompt_week;
CREATE TEMP TABLE agg_prompt_week (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, runs INTEGER NOT NULL, brand_runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL);
DROP TABLE IF EXISTS temp.agg_prompt_month;
CREATE TEMP TABLE agg_prompt_month (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, runs INTEGER NOT NULL, brand_runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL);
DROP TABLE IF EXISTS temp.agg_competitor_week;
CREATE TEMP TABLE agg_competitor_week (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL, runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL);
DROP TABLE IF EXISTS temp.agg_competitor_month;
CREATE TEMP TABLE agg_competitor_month (project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL, runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL);
DROP TABLE IF EXISTS temp.agg_cited_week;
CREATE TEMP TABLE agg_cited_week (project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL, engine_ids TEXT NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT);
DROP TABLE IF EXISTS temp.agg_cited_month;
CREATE TEMP TABLE agg_cited_month (project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL, engine_ids TEXT NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT);
DROP TABLE IF EXISTS temp.agg_cited_engine_week;
CREATE TEMP TABLE agg_cited_engine_week (project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, engine_id TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT);
DROP TABLE IF EXISTS temp.agg_cited_engine_month;
CREATE TEMP TABLE agg_cited_engine_month (project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, engine_id TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT);

INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
  SELECT run_group_id, project_id, count(*), sum(status = 'succeeded'), sum(status = 'failed')
  FROM prompt_runs GROUP BY run_group_id, project_id;

-- Each run's period: the ISO week's Monday (strftime('%w') is 0 on Sunday, so (w + 6) % 7 days back)
-- and the month's 1st.
CREATE TEMP TABLE oracle_runs AS
  SELECT r.*, date(r.day, '-' || ((CAST(strftime('%w', r.day) AS INTEGER) + 6) % 7) || ' days') AS week, strftime('%Y-%m-01', r.day) AS month
  FROM prompt_runs r WHERE r.status = 'succeeded';

-- The brand per project, period, engine and prompt, over every succeeded run (what counts is filtered when read).
INSERT INTO agg_prompt_week (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project_id, week, engine_id, prompt_id, count(*), count(brand_position), coalesce(sum(brand_position), 0),
    coalesce(sum(CAST(round(232792560.0 / brand_position) AS INTEGER)), 0),
    coalesce(sum(CAST(round(brand_sentiment * 1000000.0) AS INTEGER)), 0), count(brand_sentiment)
  FROM oracle_runs GROUP BY project_id, week, engine_id, prompt_id;
INSERT INTO agg_prompt_month (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project_id, month, engine_id, prompt_id, count(*), count(brand_position), coalesce(sum(brand_position), 0),
    coalesce(sum(CAST(round(232792560.0 / brand_position) AS INTEGER)), 0),
    coalesce(sum(CAST(round(brand_sentiment * 1000000.0) AS INTEGER)), 0), count(brand_sentiment)
  FROM oracle_runs GROUP BY project_id, month, engine_id, prompt_id;

-- Each competitor once per run, at its best position (the first such mention on a tie).
CREATE TEMP TABLE oracle_mentions AS
  WITH mention AS (
    SELECT r.id, r.project_id, r.day, r.week, r.month, r.engine_id, r.prompt_id, m.value ->> 'competitor_id' AS competitor_id,
      m.value ->> 'position' AS position, m.value ->> 'sentiment' AS sentiment,
      row_number() OVER (PARTITION BY r.id, m.value ->> 'competitor_id' ORDER BY m.value ->> 'position', m.key) AS nth
    FROM oracle_runs r, json_each(r.event, '$.data.mentions') m
    WHERE m.value ->> 'entity_type' = 'competitor' AND m.value ->> 'competitor_id' IS NOT NULL
  )
  SELECT * FROM mention WHERE nth = 1;
INSERT INTO agg_competitor_week (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project_id, week, engine_id, prompt_id, competitor_id, count(*), sum(position), sum(CAST(round(232792560.0 / position) AS INTEGER)),
    coalesce(sum(CAST(round(sentiment * 1000000.0) AS INTEGER)), 0), count(sentiment)
  FROM oracle_mentions GROUP BY project_id, week, engine_id, prompt_id, competitor_id;
INSERT INTO agg_competitor_month (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project_id, month, engine_id, prompt_id, competitor_id, count(*), sum(position), sum(CAST(round(232792560.0 / position) AS INTEGER)),
    coalesce(sum(CAST(round(sentiment * 1000000.0) AS INTEGER)), 0), count(sentiment)
  FROM oracle_mentions GROUP BY project_id, month, engine_id, prompt_id, competitor_id;

-- Per project, day and engine without the prompt (migrations 008, 011): the counted runs (a
-- non-deleted prompt of the run's project, a known engine), their tracked competitors' mentions and
-- their distinct prompts, by joins.
INSERT INTO agg_engine_day
  SELECT b.project_id, b.day, b.engine_id, b.runs, b.brand_runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n,
    coalesce(m.runs, 0), b.prompt_ids
  FROM (SELECT a.project_id, a.day, a.engine_id, count(*) AS runs, count(a.brand_position) AS brand_runs, coalesce(sum(a.brand_position), 0) AS position_sum,
          coalesce(sum(CAST(round(232792560.0 / a.brand_position) AS INTEGER)), 0) AS rr_fixed,
          coalesce(sum(CAST(round(a.brand_sentiment * 1000000.0) AS INTEGER)), 0) AS sentiment_fixed, count(a.brand_sentiment) AS sentiment_n,
          group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids
        FROM oracle_runs a JOIN prompts q ON q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0
          JOIN engines e ON e.id = a.engine_id
        GROUP BY a.project_id, a.day, a.engine_id) b
  LEFT JOIN (SELECT c.project_id, c.day, c.engine_id, count(*) AS runs
        FROM oracle_mentions c JOIN prompts q ON q.id = c.prompt_id AND q.project_id = c.project_id AND q.deleted = 0
          JOIN engines e ON e.id = c.engine_id
          JOIN competitors k ON k.id = c.competitor_id AND k.project_id = c.project_id AND k.deleted = 0
        GROUP BY c.project_id, c.day, c.engine_id) m
    ON m.project_id = b.project_id AND m.day = b.day AND m.engine_id = b.engine_id;
DROP TABLE oracle_mentions;
DROP TABLE oracle_runs;

-- Cited URLs per period without the prompt (migration 009), with the engine or without, from the runs: each URL
-- once per counted run (a non-deleted prompt of the run's project, a known engine), its first titled
-- citation, else its first; the title of the latest titled citation, a tie at one instant going to the
-- first (day, engine, prompt), then to the greater run id. An empty title is none.
CREATE TEMP TABLE oracle_cited AS
  WITH cited AS (
    SELECT r.project_id, r.day, r.engine_id, r.prompt_id, r.id AS run_id, r.completed_at AS at,
      c.value ->> 'url' AS url, domain_of(c.value ->> 'url') AS domain, nullif(c.value ->> 'title', '') AS title,
      row_number() OVER (PARTITION BY r.id, c.value ->> 'url' ORDER BY nullif(c.value ->> 'title', '') IS NULL, c.key) AS nth
    FROM prompt_runs r JOIN prompts q ON q.id = r.prompt_id AND q.project_id = r.project_id AND q.deleted = 0
      JOIN engines e ON e.id = r.engine_id, json_each(r.event, '$.data.citations') c
    WHERE r.status = 'succeeded'
  )
  SELECT * FROM cited WHERE nth = 1;
INSERT INTO agg_cited_week (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT project_id, period, url, min(domain) AS domain, count(*) AS runs, group_concat(DISTINCT engine_id ORDER BY engine_id) AS engine_ids, group_concat(DISTINCT prompt_id ORDER BY prompt_id) AS prompt_ids,
      min(at) AS first_at, max(at) AS last_at,
      (json_group_array(json_array(title, at, day || ' ' || engine_id || ' ' || prompt_id, run_id) ORDER BY at DESC, day, engine_id, prompt_id, run_id DESC) FILTER (WHERE title IS NOT NULL)) -> 0 AS w
    FROM (SELECT *, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period FROM oracle_cited)
    GROUP BY project_id, period, url);
INSERT INTO agg_cited_month (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT project_id, period, url, min(domain) AS domain, count(*) AS runs, group_concat(DISTINCT engine_id ORDER BY engine_id) AS engine_ids, group_concat(DISTINCT prompt_id ORDER BY prompt_id) AS prompt_ids,
      min(at) AS first_at, max(at) AS last_at,
      (json_group_array(json_array(title, at, day || ' ' || engine_id || ' ' || prompt_id, run_id) ORDER BY at DESC, day, engine_id, prompt_id, run_id DESC) FILTER (WHERE title IS NOT NULL)) -> 0 AS w
    FROM (SELECT *, strftime('%Y-%m-01', day) AS period FROM oracle_cited)
    GROUP BY project_id, period, url);
INSERT INTO agg_cited_engine_week (project_id, day, url, engine_id, domain, runs, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT project_id, period, url, engine_id, domain, runs, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT project_id, period, url, engine_id, min(domain) AS domain, count(*) AS runs, group_concat(DISTINCT prompt_id ORDER BY prompt_id) AS prompt_ids,
      min(at) AS first_at, max(at) AS last_at,
      (json_group_array(json_array(title, at, day || ' ' || engine_id || ' ' || prompt_id, run_id) ORDER BY at DESC, day, prompt_id, run_id DESC) FILTER (WHERE title IS NOT NULL)) -> 0 AS w
    FROM (SELECT *, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period FROM oracle_cited)
    GROUP BY project_id, period, url, engine_id);
INSERT INTO agg_cited_engine_month (project_id, day, url, engine_id, domain, runs, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  SELECT project_id, period, url, engine_id, domain, runs, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT project_id, period, url, engine_id, min(domain) AS domain, count(*) AS runs, group_concat(DISTINCT prompt_id ORDER BY prompt_id) AS prompt_ids,
      min(at) AS first_at, max(at) AS last_at,
      (json_group_array(json_array(title, at, day || ' ' || engine_id || ' ' || prompt_id, run_id) ORDER BY at DESC, day, prompt_id, run_id DESC) FILTER (WHERE title IS NOT NULL)) -> 0 AS w
    FROM (SELECT *, strftime('%Y-%m-01', day) AS period FROM oracle_cited)
    GROUP BY project_id, period, url, engine_id);
DROP TABLE oracle_cited;
