-- The day tables of schema 10, which migration 011 dropped, made again from the stored runs, and the
-- rest of schema 011 taken back: a database as a build before 011 left it (test/store/migrations.test.ts,
-- which registers domain_of(url): src/store/run-store.ts domainOf).
-- The rows are what that build's writer kept (its oracle's SQL, test/helpers/oracle-aggregates.sql at the time).

CREATE TABLE agg_prompt_day (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL,
  runs INTEGER NOT NULL, brand_runs INTEGER NOT NULL, position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL,
  sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;
CREATE TABLE agg_competitor_day (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL,
  runs INTEGER NOT NULL, position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;
CREATE TABLE agg_url_day (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL,
  runs INTEGER NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, url)
) WITHOUT ROWID;
CREATE TABLE agg_cited_day (
  project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL,
  engine_ids TEXT NOT NULL, prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL,
  title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;

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
    FROM prompt_runs r, json_each(r.event, '$.data.mentions') m
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
      c.value ->> 'url' AS url, domain_of(c.value ->> 'url') AS domain, nullif(c.value ->> 'title', '') AS title,
      row_number() OVER (PARTITION BY r.id, c.value ->> 'url' ORDER BY nullif(c.value ->> 'title', '') IS NULL, c.key) AS nth
    FROM prompt_runs r, json_each(r.event, '$.data.citations') c
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
DROP TABLE oracle_cited;

DROP TABLE run_refs;
DROP TABLE run_ids;
DROP TABLE store_meta;
CREATE TABLE prompt_runs_10 (
  id TEXT PRIMARY KEY, run_group_id TEXT NOT NULL, project_id TEXT NOT NULL, prompt_id TEXT NOT NULL, engine_id TEXT NOT NULL,
  status TEXT NOT NULL, completed_at TEXT NOT NULL, day TEXT NOT NULL, response_excerpt TEXT, brand_position INTEGER, brand_sentiment REAL,
  mention_count INTEGER NOT NULL, citation_count INTEGER NOT NULL, mentions TEXT NOT NULL, citations TEXT NOT NULL, fact_hash TEXT NOT NULL,
  v_at TEXT NOT NULL, v_id TEXT NOT NULL
);
-- Mentions and citations as schema 10 kept them: every field present (null where absent), citations with their domain.
INSERT INTO prompt_runs_10 SELECT id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day,
  event ->> '$.data.response_excerpt', brand_position, brand_sentiment, mention_count, citation_count,
  (SELECT json_group_array(json_object('entity_type', m.value ->> 'entity_type', 'competitor_id', m.value ->> 'competitor_id', 'name', m.value ->> 'name',
      'position', m.value -> 'position', 'sentiment', m.value -> 'sentiment', 'snippet', m.value ->> 'snippet') ORDER BY m.key)
    FROM json_each(event, '$.data.mentions') m),
  (SELECT json_group_array(json_object('url', c.value ->> 'url', 'domain', domain_of(c.value ->> 'url'), 'title', c.value ->> 'title',
      'position', c.value -> 'position') ORDER BY c.key)
    FROM json_each(event, '$.data.citations') c),
  '', v_at, v_id FROM prompt_runs;
DROP TABLE prompt_runs;
ALTER TABLE prompt_runs_10 RENAME TO prompt_runs;
CREATE INDEX prompt_runs_by_group ON prompt_runs (run_group_id, id);
CREATE INDEX prompt_runs_recent ON prompt_runs (project_id, completed_at DESC, id);
ALTER TABLE agg_engine_day DROP COLUMN prompt_ids;
PRAGMA user_version = 10;
