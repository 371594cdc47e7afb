-- 015: where, as whom and by which model a run was asked (issue 41): prompt_run.completed's optional
-- country, persona, model and surface.
--
-- A project's runs name few combinations of the four (a handful of countries, personas, models and
-- two surfaces), so each combination is a small number (`dims`), and a run's row keeps that number
-- (NULL when it names none of them). The runs' day index carries it, so a filtered range is decided
-- on the index entries of its days. A value the run does not name is stored as '' (UNIQUE treats
-- NULLs as distinct); the view shows it as NULL. Numbers are given as combinations are first seen
-- and mean nothing else: nothing the API shows or the digest reads depends on them.
CREATE TABLE dims (
  n        INTEGER PRIMARY KEY,
  country  TEXT NOT NULL,
  persona  TEXT NOT NULL,
  model    TEXT NOT NULL,
  surface  TEXT NOT NULL,
  UNIQUE (country, persona, model, surface)
);

ALTER TABLE runs ADD COLUMN dims INTEGER;

-- Stored events never carried the fields before (the schema had none), but an event may have sent
-- them unasked: they count as the schema now reads them.
CREATE TEMP TABLE run_dims AS
  SELECT rowid AS run, coalesce(event ->> '$.data.country', '') AS country, coalesce(event ->> '$.data.persona', '') AS persona,
    coalesce(event ->> '$.data.model', '') AS model, coalesce(event ->> '$.data.surface', '') AS surface
  FROM runs
  WHERE event ->> '$.data.country' IS NOT NULL OR event ->> '$.data.persona' IS NOT NULL
    OR event ->> '$.data.model' IS NOT NULL OR event ->> '$.data.surface' IS NOT NULL;
INSERT OR IGNORE INTO dims (country, persona, model, surface)
  SELECT DISTINCT country, persona, model, surface FROM run_dims ORDER BY country, persona, model, surface;
UPDATE runs SET dims = (SELECT d.n FROM run_dims x JOIN dims d USING (country, persona, model, surface) WHERE x.run = runs.rowid)
  WHERE rowid IN (SELECT run FROM run_dims);
DROP TABLE temp.run_dims;

DROP INDEX runs_recent;
CREATE INDEX runs_recent ON runs (project, completed_at, dims);

DROP VIEW prompt_runs;
CREATE VIEW prompt_runs AS
  SELECT r.id, g.id AS run_group_id, p.id AS project_id, r.facts ->> 1 AS prompt_id, r.facts ->> 0 AS engine_id, r.status,
    r.completed_at, substr(r.completed_at, 1, 10) AS day, r.facts ->> 2 AS brand_position, r.facts ->> 3 AS brand_sentiment,
    r.facts ->> 4 AS mention_count, r.facts ->> 5 AS citation_count, r.event, r.facts -> 6 AS hits, r.facts -> 7 AS cited,
    nullif(d.country, '') AS country, nullif(d.persona, '') AS persona, nullif(d.model, '') AS model, nullif(d.surface, '') AS surface
  FROM runs r JOIN keys p ON p.n = r.project JOIN keys g ON g.n = r.run_group LEFT JOIN dims d ON d.n = r.dims;
