-- Migration 013 taken back: a database as a build of schema 12 left it (test/store/migrations.test.ts):
-- prompt_runs with its own columns and text indexes, a run's version in v_at and v_id, and the week
-- and month roll-ups as tables of rows.

CREATE TABLE prompt_runs_12 (
  id TEXT NOT NULL, run_group_id TEXT NOT NULL, project_id TEXT NOT NULL, prompt_id TEXT NOT NULL, engine_id TEXT NOT NULL,
  status TEXT NOT NULL, completed_at TEXT NOT NULL, day TEXT NOT NULL, brand_position INTEGER, brand_sentiment REAL,
  mention_count INTEGER NOT NULL, citation_count INTEGER NOT NULL, event TEXT NOT NULL, hits TEXT NOT NULL, cited TEXT NOT NULL,
  v_at TEXT NOT NULL, v_id TEXT NOT NULL
);
INSERT INTO prompt_runs_12 (rowid, id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day, brand_position, brand_sentiment,
    mention_count, citation_count, event, hits, cited, v_at, v_id)
  SELECT rowid, id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day, brand_position, brand_sentiment,
    mention_count, citation_count, event, hits, cited, strftime('%Y-%m-%dT%H:%M:%fZ', event ->> '$.occurred_at'), event ->> '$.event_id'
  FROM (SELECT r.rowid, v.* FROM runs r JOIN prompt_runs v ON v.id = r.id AND v.completed_at = r.completed_at) ORDER BY rowid;
DROP VIEW prompt_runs;
DROP TABLE runs;
DROP TABLE keys;
ALTER TABLE prompt_runs_12 RENAME TO prompt_runs;
CREATE INDEX prompt_runs_by_group ON prompt_runs (run_group_id, id);
CREATE INDEX prompt_runs_recent ON prompt_runs (project_id, completed_at DESC, id);

CREATE TABLE agg_prompt_week_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, runs INTEGER NOT NULL, brand_runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;
INSERT INTO agg_prompt_week_12 SELECT * FROM agg_prompt_week;
DROP VIEW agg_prompt_week;
ALTER TABLE agg_prompt_week_12 RENAME TO agg_prompt_week;
CREATE TABLE agg_prompt_month_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, runs INTEGER NOT NULL, brand_runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;
INSERT INTO agg_prompt_month_12 SELECT * FROM agg_prompt_month;
DROP VIEW agg_prompt_month;
ALTER TABLE agg_prompt_month_12 RENAME TO agg_prompt_month;
CREATE TABLE agg_competitor_week_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL, runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;
INSERT INTO agg_competitor_week_12 SELECT * FROM agg_competitor_week;
DROP VIEW agg_competitor_week;
ALTER TABLE agg_competitor_week_12 RENAME TO agg_competitor_week;
CREATE TABLE agg_competitor_month_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, engine_id TEXT NOT NULL, prompt_id TEXT NOT NULL, competitor_id TEXT NOT NULL, runs INTEGER NOT NULL,
  position_sum INTEGER NOT NULL, rr_fixed INTEGER NOT NULL, sentiment_fixed INTEGER NOT NULL, sentiment_n INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;
INSERT INTO agg_competitor_month_12 SELECT * FROM agg_competitor_month;
DROP VIEW agg_competitor_month;
ALTER TABLE agg_competitor_month_12 RENAME TO agg_competitor_month;
CREATE TABLE agg_cited_week_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL, engine_ids TEXT NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;
INSERT INTO agg_cited_week_12 SELECT * FROM agg_cited_week;
DROP VIEW agg_cited_week;
ALTER TABLE agg_cited_week_12 RENAME TO agg_cited_week;
CREATE TABLE agg_cited_month_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL, engine_ids TEXT NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;
INSERT INTO agg_cited_month_12 SELECT * FROM agg_cited_month;
DROP VIEW agg_cited_month;
ALTER TABLE agg_cited_month_12 RENAME TO agg_cited_month;
CREATE TABLE agg_cited_engine_week_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, engine_id TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, url, engine_id)
) WITHOUT ROWID;
INSERT INTO agg_cited_engine_week_12 SELECT * FROM agg_cited_engine_week;
DROP VIEW agg_cited_engine_week;
ALTER TABLE agg_cited_engine_week_12 RENAME TO agg_cited_engine_week;
CREATE TABLE agg_cited_engine_month_12 (
  project_id TEXT NOT NULL, day TEXT NOT NULL, url TEXT NOT NULL, engine_id TEXT NOT NULL, domain TEXT NOT NULL, runs INTEGER NOT NULL,
  prompt_ids TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL, title TEXT, title_at TEXT, title_bucket TEXT, title_run TEXT,
  PRIMARY KEY (project_id, day, url, engine_id)
) WITHOUT ROWID;
INSERT INTO agg_cited_engine_month_12 SELECT * FROM agg_cited_engine_month;
DROP VIEW agg_cited_engine_month;
ALTER TABLE agg_cited_engine_month_12 RENAME TO agg_cited_engine_month;
DROP TABLE rollups;
PRAGMA user_version = 12;
