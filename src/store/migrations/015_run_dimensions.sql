-- 015: where, as whom and by which model a run was asked: prompt_run.completed's optional
-- country, persona, model and surface.
--
-- A project's runs name few combinations of the four (a handful of countries, personas, models and
-- two surfaces), so each combination of a project is a small number (`dims`), and a run's row keeps
-- that number (NULL when it names none of them). The numbers are the project's own: a filter reads
-- only its project's combinations, whatever other projects' runs name. The runs' day index carries
-- it, so a filtered range is decided on the index entries of its days. A value the run does not name
-- is stored as '' (UNIQUE treats NULLs as distinct); the view shows it as NULL. Numbers are given as
-- combinations are first seen and mean nothing else: nothing the API shows or the digest reads
-- depends on them.
CREATE TABLE dims (
  n        INTEGER PRIMARY KEY,
  project  INTEGER NOT NULL,  -- keys.n of the project whose runs name the combination
  country  TEXT NOT NULL,
  persona  TEXT NOT NULL,
  model    TEXT NOT NULL,
  surface  TEXT NOT NULL,
  UNIQUE (project, country, persona, model, surface)
);

ALTER TABLE runs ADD COLUMN dims INTEGER;

-- Stored events never carried the fields before (the schema had none), but an event may have sent
-- them unasked: a value counts when the schema now accepts it (the same as replaying the event would
-- decide), and is left out otherwise.
CREATE TEMP TABLE run_dims AS
  SELECT run, project, coalesce(country, '') AS country, coalesce(persona, '') AS persona, coalesce(model, '') AS model, coalesce(surface, '') AS surface
  FROM (SELECT rowid AS run, project,
      CASE WHEN event ->> '$.data.country' GLOB '[A-Z][A-Z]' AND length(event ->> '$.data.country') = 2 THEN event ->> '$.data.country' END AS country,
      CASE WHEN json_type(event, '$.data.persona') = 'text' AND length(event ->> '$.data.persona') BETWEEN 1 AND 64 THEN event ->> '$.data.persona' END AS persona,
      CASE WHEN json_type(event, '$.data.model') = 'text' AND length(event ->> '$.data.model') BETWEEN 1 AND 128 THEN event ->> '$.data.model' END AS model,
      CASE WHEN event ->> '$.data.surface' IN ('api', 'app') THEN event ->> '$.data.surface' END AS surface
    FROM runs)
  WHERE country IS NOT NULL OR persona IS NOT NULL OR model IS NOT NULL OR surface IS NOT NULL;
INSERT OR IGNORE INTO dims (project, country, persona, model, surface)
  SELECT DISTINCT project, country, persona, model, surface FROM run_dims ORDER BY project, country, persona, model, surface;
UPDATE runs SET dims = (SELECT d.n FROM run_dims x JOIN dims d USING (project, country, persona, model, surface) WHERE x.run = runs.rowid)
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
