-- 009: cited URLs per project, period and URL (and engine), without the prompt (the
-- citations, referrers and warm leads of a range of up to 366 days).
--
-- Those lists add up agg_url_day over the range: ~100k rows for a year of a busy project (15
-- prompts x 5 engines), 140-170 ms a build. Here the same year is ~1.5k month rows plus a few
-- weeks and days at its edges (src/readmodels/range-pieces.ts rangePieces), 3-6 ms; with an engine filter
-- the engine tables below, 3-9 ms.
--
-- One table per grain, as 007: `day` is the period's first day (the day itself, the Monday of the
-- ISO week, the 1st of the month). Only what counts is in these rows, as in 008: citations by runs of
-- the project's non-deleted prompts on known engines (COUNTED_RUNS). A row holds what the lists show
-- of a URL, merged over its counted agg_url_day rows of the period:
-- - runs (summed), first_at / last_at (min / max), domain (every row of a URL has the same);
-- - engine_ids, prompt_ids: the distinct ids, sorted, comma-separated (ids are UUIDs), so that the
--   distinct prompts and engines of a range are the union of its pieces' lists;
-- - the title of the winning titled row: the latest title_at, then the first bucket in key order
--   (title_bucket = day, engine, prompt: fixed-width text, so text order is key order), which is the
--   rule the lists apply to day rows; title_run breaks a tie inside one bucket for the writer.
-- The writer merges the same citations in the same transaction as the day rows and counts a row again
-- from them when a superseded run leaves it, or the project's rows when what counts changes
-- (src/store/cited.ts). Lists, min and max do not subtract, so nothing here moves by deltas alone.

CREATE TABLE agg_cited_day (
  project_id    TEXT NOT NULL,
  day           TEXT NOT NULL,
  url           TEXT NOT NULL,
  domain        TEXT NOT NULL,
  runs          INTEGER NOT NULL,
  engine_ids    TEXT NOT NULL,
  prompt_ids    TEXT NOT NULL,
  first_at      TEXT NOT NULL,
  last_at       TEXT NOT NULL,
  title         TEXT,
  title_at      TEXT,
  title_bucket  TEXT,
  title_run     TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;

CREATE TABLE agg_cited_week (
  project_id    TEXT NOT NULL,
  day           TEXT NOT NULL,     -- Monday of the ISO week
  url           TEXT NOT NULL,
  domain        TEXT NOT NULL,
  runs          INTEGER NOT NULL,
  engine_ids    TEXT NOT NULL,
  prompt_ids    TEXT NOT NULL,
  first_at      TEXT NOT NULL,
  last_at       TEXT NOT NULL,
  title         TEXT,
  title_at      TEXT,
  title_bucket  TEXT,
  title_run     TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;

CREATE TABLE agg_cited_month (
  project_id    TEXT NOT NULL,
  day           TEXT NOT NULL,     -- 1st of the month
  url           TEXT NOT NULL,
  domain        TEXT NOT NULL,
  runs          INTEGER NOT NULL,
  engine_ids    TEXT NOT NULL,
  prompt_ids    TEXT NOT NULL,
  first_at      TEXT NOT NULL,
  last_at       TEXT NOT NULL,
  title         TEXT,
  title_at      TEXT,
  title_bucket  TEXT,
  title_run     TEXT,
  PRIMARY KEY (project_id, day, url)
) WITHOUT ROWID;

-- The same per URL and engine, at week and month: the lists with an engine filter read these and only
-- their days from agg_url_day (a day of a URL is about one row per engine there already).
CREATE TABLE agg_cited_engine_week (
  project_id    TEXT NOT NULL,
  day           TEXT NOT NULL,     -- Monday of the ISO week
  url           TEXT NOT NULL,
  engine_id     TEXT NOT NULL,
  domain        TEXT NOT NULL,
  runs          INTEGER NOT NULL,
  prompt_ids    TEXT NOT NULL,
  first_at      TEXT NOT NULL,
  last_at       TEXT NOT NULL,
  title         TEXT,
  title_at      TEXT,
  title_bucket  TEXT,
  title_run     TEXT,
  PRIMARY KEY (project_id, day, url, engine_id)
) WITHOUT ROWID;

CREATE TABLE agg_cited_engine_month (
  project_id    TEXT NOT NULL,
  day           TEXT NOT NULL,     -- 1st of the month
  url           TEXT NOT NULL,
  engine_id     TEXT NOT NULL,
  domain        TEXT NOT NULL,
  runs          INTEGER NOT NULL,
  prompt_ids    TEXT NOT NULL,
  first_at      TEXT NOT NULL,
  last_at       TEXT NOT NULL,
  title         TEXT,
  title_at      TEXT,
  title_bucket  TEXT,
  title_run     TEXT,
  PRIMARY KEY (project_id, day, url, engine_id)
) WITHOUT ROWID;

-- Filled in from the counted day rows (the winning title's four columns as one JSON array, NULL when
-- none is titled). src/store/cited.ts counts a project's rows again by the same rule, merging its
-- day rows in JavaScript as it merges a batch.
INSERT INTO agg_cited_day
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, a.day AS period, a.url, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.engine_id ORDER BY a.engine_id) AS engine_ids, group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0)
      AND EXISTS (SELECT 1 FROM engines e WHERE e.id = a.engine_id)
    GROUP BY a.project_id, period, a.url);
INSERT INTO agg_cited_week
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, date(a.day, '-' || ((CAST(strftime('%w', a.day) AS INTEGER) + 6) % 7) || ' days') AS period, a.url, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.engine_id ORDER BY a.engine_id) AS engine_ids, group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0)
      AND EXISTS (SELECT 1 FROM engines e WHERE e.id = a.engine_id)
    GROUP BY a.project_id, period, a.url);
INSERT INTO agg_cited_month
  SELECT project_id, period, url, domain, runs, engine_ids, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, strftime('%Y-%m-01', a.day) AS period, a.url, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.engine_id ORDER BY a.engine_id) AS engine_ids, group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0)
      AND EXISTS (SELECT 1 FROM engines e WHERE e.id = a.engine_id)
    GROUP BY a.project_id, period, a.url);
INSERT INTO agg_cited_engine_week
  SELECT project_id, period, url, engine_id, domain, runs, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, date(a.day, '-' || ((CAST(strftime('%w', a.day) AS INTEGER) + 6) % 7) || ' days') AS period, a.url, a.engine_id, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0)
      AND EXISTS (SELECT 1 FROM engines e WHERE e.id = a.engine_id)
    GROUP BY a.project_id, period, a.url, a.engine_id);
INSERT INTO agg_cited_engine_month
  SELECT project_id, period, url, engine_id, domain, runs, prompt_ids, first_at, last_at, w ->> 0, w ->> 1, w ->> 2, w ->> 3
  FROM (SELECT a.project_id, strftime('%Y-%m-01', a.day) AS period, a.url, a.engine_id, min(a.domain) AS domain, sum(a.runs) AS runs,
      group_concat(DISTINCT a.prompt_id ORDER BY a.prompt_id) AS prompt_ids,
      min(a.first_at) AS first_at, max(a.last_at) AS last_at,
      (json_group_array(json_array(a.title, a.title_at, a.day || ' ' || a.engine_id || ' ' || a.prompt_id, a.title_run)
        ORDER BY a.title_at DESC, a.day, a.engine_id, a.prompt_id) FILTER (WHERE a.title IS NOT NULL AND a.title_at > '')) -> 0 AS w
    FROM agg_url_day a
    WHERE EXISTS (SELECT 1 FROM prompts q WHERE q.id = a.prompt_id AND q.project_id = a.project_id AND q.deleted = 0)
      AND EXISTS (SELECT 1 FROM engines e WHERE e.id = a.engine_id)
    GROUP BY a.project_id, period, a.url, a.engine_id);
