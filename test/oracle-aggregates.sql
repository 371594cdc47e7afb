-- An independent oracle for the aggregates: every row computed from the stored runs by SQL in one
-- pass per table, where src/store/aggregates.ts moves them by deltas, run by run. test/deltas.test.ts
-- replaces the tables with these and expects the same digest. Rounding is SQLite's round() (half
-- away from zero), which is what rrFixed and sentimentFixed do in JavaScript.

DELETE FROM agg_prompt_day;
DELETE FROM agg_competitor_day;
DELETE FROM agg_url_day;
DELETE FROM agg_run_group;
DELETE FROM agg_prompt_week;
DELETE FROM agg_prompt_month;
DELETE FROM agg_competitor_week;
DELETE FROM agg_competitor_month;
DELETE FROM agg_engine_day;
DELETE FROM agg_cited_day;
DELETE FROM agg_cited_week;
DELETE FROM agg_cited_month;
DELETE FROM agg_cited_engine_week;
DELETE FROM agg_cited_engine_month;

INSERT INTO agg_prompt_day (project_id, day, engine_id, prompt_id, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project_id, day, engine_id, prompt_id, count(*), count(brand_position), coalesce(sum(brand_position), 0),
    coalesce(sum(CAST(round(232792560.0 / brand_position) AS INTEGER)), 0),
    coalesce(sum(CAST(round(brand_sentiment * 1000000.0) AS INTEGER)), 0), count(brand_sentiment)
  FROM prompt_runs WHERE status = 'succeeded'
  GROUP BY project_id, day, engine_id, prompt_id;

-- Each competitor once per run, at its best position (the first such mention on a tie).
INSERT INTO agg_competitor_day (project_id, day, engine_id, prompt_id, competitor_id, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  WITH mention AS (
    SELECT r.project_id, r.day, r.engine_id, r.prompt_id, m.value ->> 'competitor_id' AS competitor_id,
      m.value ->> 'position' AS position, m.value ->> 'sentiment' AS sentiment,
      row_number() OVER (PARTITION BY r.id, m.value ->> 'competitor_id' ORDER BY m.value ->> 'position', m.key) AS nth
    FROM prompt_runs r, json_each(r.mentions) m
    WHERE r.status = 'succeeded' AND m.value ->> 'entity_type' = 'competitor' AND m.value ->> 'competitor_id' IS NOT NULL
  )
  SELECT project_id, day, engine_id, prompt_id, competitor_id, count(*), sum(position),
    sum(CAST(round(232792560.0 / position) AS INTEGER)),
    coalesce(sum(CAST(round(sentiment * 1000000.0) AS INTEGER)), 0), count(sentiment)
  FROM mention WHERE nth = 1
  GROUP BY project_id, day, engine_id, prompt_id, competitor_id;

-- Each URL once per run (its first titled citation, else its first); the title is that of the
-- latest titled citation, a tie at one instant going to the greater run id. An empty title is none.
INSERT INTO agg_url_day (project_id, day, engine_id, prompt_id, url, domain, runs, first_at, last_at, title, title_at, title_run)
  WITH cited AS (
    SELECT r.project_id, r.day, r.engine_id, r.prompt_id, r.id AS run_id, r.completed_at AS at,
      c.value ->> 'url' AS url, c.value ->> 'domain' AS domain, nullif(c.value ->> 'title', '') AS title,
      row_number() OVER (PARTITION BY r.id, c.value ->> 'url' ORDER BY nullif(c.value ->> 'title', '') IS NULL, c.key) AS nth
    FROM prompt_runs r, json_each(r.citations) c
    WHERE r.status = 'succeeded'
  ),
  once AS (SELECT * FROM cited WHERE nth = 1),
  titled AS (
    SELECT project_id, day, engine_id, prompt_id, url, title, at, run_id,
      row_number() OVER (PARTITION BY project_id, day, engine_id, prompt_id, url ORDER BY at DESC, run_id DESC) AS latest
    FROM once WHERE title IS NOT NULL
  )
  SELECT o.project_id, o.day, o.engine_id, o.prompt_id, o.url, min(o.domain), count(*), min(o.at), max(o.at),
    t.title, t.at, t.run_id
  FROM once o LEFT JOIN titled t ON t.latest = 1 AND t.project_id = o.project_id AND t.day = o.day
    AND t.engine_id = o.engine_id AND t.prompt_id = o.prompt_id AND t.url = o.url
  GROUP BY o.project_id, o.day, o.engine_id, o.prompt_id, o.url;

INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
  SELECT run_group_id, project_id, count(*), sum(status = 'succeeded'), sum(status = 'failed')
  FROM prompt_runs GROUP BY run_group_id, project_id;

-- Week and month roll-ups (migration 007): the day rows above summed per ISO week (its Monday:
-- strftime('%w') is 0 on Sunday, so (w + 6) % 7 days back) and per calendar month (its 1st).
INSERT INTO agg_prompt_week
  SELECT project_id, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period, engine_id, prompt_id,
    sum(runs), sum(brand_runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_prompt_day GROUP BY project_id, period, engine_id, prompt_id;
INSERT INTO agg_prompt_month
  SELECT project_id, strftime('%Y-%m-01', day) AS period, engine_id, prompt_id,
    sum(runs), sum(brand_runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_prompt_day GROUP BY project_id, period, engine_id, prompt_id;
INSERT INTO agg_competitor_week
  SELECT project_id, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period, engine_id, prompt_id, competitor_id,
    sum(runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_competitor_day GROUP BY project_id, period, engine_id, prompt_id, competitor_id;
INSERT INTO agg_competitor_month
  SELECT project_id, strftime('%Y-%m-01', day) AS period, engine_id, prompt_id, competitor_id,
    sum(runs), sum(position_sum), sum(rr_fixed), sum(sentiment_fixed), sum(sentiment_n)
  FROM agg_competitor_day GROUP BY project_id, period, engine_id, prompt_id, competitor_id;

-- Per project, day and engine without the prompt (migration 008): what counts of the day rows
-- above (non-deleted prompts of the project, known engines, tracked competitors), by joins.
INSERT INTO agg_engine_day
  SELECT b.project_id, b.day, b.engine_id, b.runs, b.brand_runs, b.position_sum, b.rr_fixed, b.sentiment_fixed, b.sentiment_n,
    coalesce(m.runs, 0)
  FROM (SELECT a.project_id, a.day, a.engine_id, sum(a.runs) AS runs, sum(a.brand_runs) AS brand_runs, sum(a.position_sum) AS position_sum,
          sum(a.rr_fixed) AS rr_fixed, sum(a.sentiment_fixed) AS sentiment_fixed, sum(a.sentiment_n) AS sentiment_n
        FROM agg_prompt_day a JOIN prompts q ON q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0
          JOIN engines e ON e.id = a.engine_id
        GROUP BY a.project_id, a.day, a.engine_id) b
  LEFT JOIN (SELECT c.project_id, c.day, c.engine_id, sum(c.runs) AS runs
        FROM agg_competitor_day c JOIN prompts q ON q.id = c.prompt_id AND q.project_id = c.project_id AND q.deleted = 0
          JOIN competitors k ON k.id = c.competitor_id AND k.project_id = c.project_id AND k.deleted = 0
        GROUP BY c.project_id, c.day, c.engine_id) m
    ON m.project_id = b.project_id AND m.day = b.day AND m.engine_id = b.engine_id;

-- Cited URLs per period without the prompt (migration 009), with the engine or without, from the runs: each URL
-- once per counted run (a non-deleted prompt of the run's project, a known engine), as above; the
-- title of the latest titled citation, a tie at one instant going to the first (day, engine, prompt),
-- then to the greater run id.
CREATE TEMP TABLE oracle_cited AS
  WITH cited AS (
    SELECT r.project_id, r.day, r.engine_id, r.prompt_id, r.id AS run_id, r.completed_at AS at,
      c.value ->> 'url' AS url, c.value ->> 'domain' AS domain, nullif(c.value ->> 'title', '') AS title,
      row_number() OVER (PARTITION BY r.id, c.value ->> 'url' ORDER BY nullif(c.value ->> 'title', '') IS NULL, c.key) AS nth
    FROM prompt_runs r JOIN prompts q ON q.id = r.prompt_id AND q.project_id = r.project_id AND q.deleted = 0
      JOIN engines e ON e.id = r.engine_id, json_each(r.citations) c
    WHERE r.status = 'succeeded'
  )
  SELECT * FROM cited WHERE nth = 1;
INSERT INTO agg_cited_day (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  WITH c AS (SELECT *, day AS period FROM oracle_cited),
  titled AS (
    SELECT project_id, period, url, title, at, day || ' ' || engine_id || ' ' || prompt_id AS bucket, run_id,
      row_number() OVER (PARTITION BY project_id, period, url ORDER BY at DESC, day, engine_id, prompt_id, run_id DESC) AS latest
    FROM c WHERE title IS NOT NULL
  )
  SELECT c.project_id, c.period, c.url, min(c.domain), count(*),
    (SELECT group_concat(e, ',') FROM (SELECT DISTINCT x.engine_id AS e FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    (SELECT group_concat(p, ',') FROM (SELECT DISTINCT x.prompt_id AS p FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    min(c.at), max(c.at), t.title, t.at, t.bucket, t.run_id
  FROM c LEFT JOIN titled t ON t.latest = 1 AND t.project_id = c.project_id AND t.period = c.period AND t.url = c.url
  GROUP BY c.project_id, c.period, c.url;
INSERT INTO agg_cited_week (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  WITH c AS (SELECT *, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period FROM oracle_cited),
  titled AS (
    SELECT project_id, period, url, title, at, day || ' ' || engine_id || ' ' || prompt_id AS bucket, run_id,
      row_number() OVER (PARTITION BY project_id, period, url ORDER BY at DESC, day, engine_id, prompt_id, run_id DESC) AS latest
    FROM c WHERE title IS NOT NULL
  )
  SELECT c.project_id, c.period, c.url, min(c.domain), count(*),
    (SELECT group_concat(e, ',') FROM (SELECT DISTINCT x.engine_id AS e FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    (SELECT group_concat(p, ',') FROM (SELECT DISTINCT x.prompt_id AS p FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    min(c.at), max(c.at), t.title, t.at, t.bucket, t.run_id
  FROM c LEFT JOIN titled t ON t.latest = 1 AND t.project_id = c.project_id AND t.period = c.period AND t.url = c.url
  GROUP BY c.project_id, c.period, c.url;
INSERT INTO agg_cited_month (project_id, day, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  WITH c AS (SELECT *, strftime('%Y-%m-01', day) AS period FROM oracle_cited),
  titled AS (
    SELECT project_id, period, url, title, at, day || ' ' || engine_id || ' ' || prompt_id AS bucket, run_id,
      row_number() OVER (PARTITION BY project_id, period, url ORDER BY at DESC, day, engine_id, prompt_id, run_id DESC) AS latest
    FROM c WHERE title IS NOT NULL
  )
  SELECT c.project_id, c.period, c.url, min(c.domain), count(*),
    (SELECT group_concat(e, ',') FROM (SELECT DISTINCT x.engine_id AS e FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    (SELECT group_concat(p, ',') FROM (SELECT DISTINCT x.prompt_id AS p FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url ORDER BY 1)),
    min(c.at), max(c.at), t.title, t.at, t.bucket, t.run_id
  FROM c LEFT JOIN titled t ON t.latest = 1 AND t.project_id = c.project_id AND t.period = c.period AND t.url = c.url
  GROUP BY c.project_id, c.period, c.url;
INSERT INTO agg_cited_engine_week (project_id, day, url, engine_id, domain, runs, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  WITH c AS (SELECT *, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days') AS period FROM oracle_cited),
  titled AS (
    SELECT project_id, period, url, engine_id, title, at, day || ' ' || engine_id || ' ' || prompt_id AS bucket, run_id,
      row_number() OVER (PARTITION BY project_id, period, url, engine_id ORDER BY at DESC, day, prompt_id, run_id DESC) AS latest
    FROM c WHERE title IS NOT NULL
  )
  SELECT c.project_id, c.period, c.url, c.engine_id, min(c.domain), count(*),
    (SELECT group_concat(p, ',') FROM (SELECT DISTINCT x.prompt_id AS p FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url AND x.engine_id = c.engine_id ORDER BY 1)),
    min(c.at), max(c.at), t.title, t.at, t.bucket, t.run_id
  FROM c LEFT JOIN titled t ON t.latest = 1 AND t.project_id = c.project_id AND t.period = c.period AND t.url = c.url AND t.engine_id = c.engine_id
  GROUP BY c.project_id, c.period, c.url, c.engine_id;
INSERT INTO agg_cited_engine_month (project_id, day, url, engine_id, domain, runs, prompt_ids, first_at, last_at, title, title_at, title_bucket, title_run)
  WITH c AS (SELECT *, strftime('%Y-%m-01', day) AS period FROM oracle_cited),
  titled AS (
    SELECT project_id, period, url, engine_id, title, at, day || ' ' || engine_id || ' ' || prompt_id AS bucket, run_id,
      row_number() OVER (PARTITION BY project_id, period, url, engine_id ORDER BY at DESC, day, prompt_id, run_id DESC) AS latest
    FROM c WHERE title IS NOT NULL
  )
  SELECT c.project_id, c.period, c.url, c.engine_id, min(c.domain), count(*),
    (SELECT group_concat(p, ',') FROM (SELECT DISTINCT x.prompt_id AS p FROM c x WHERE x.project_id = c.project_id AND x.period = c.period AND x.url = c.url AND x.engine_id = c.engine_id ORDER BY 1)),
    min(c.at), max(c.at), t.title, t.at, t.bucket, t.run_id
  FROM c LEFT JOIN titled t ON t.latest = 1 AND t.project_id = c.project_id AND t.period = c.period AND t.url = c.url AND t.engine_id = c.engine_id
  GROUP BY c.project_id, c.period, c.url, c.engine_id;
DROP TABLE oracle_cited;
