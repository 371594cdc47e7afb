-- 006: the change feed and data-as-of.
--
-- data_versions.data_as_of: for a 'project:<id>' scope, the newest occurred_at of the events applied
-- to that project (the max over time, so an old event arriving late does not move it back). Other
-- scopes leave it NULL.
--
-- project_changes: a bounded log of the commits that changed a project's read models, so that a
-- change feed can resume from a version. One row per project per committed batch that changed it:
--   version       the project's X-Data-Version after that commit (its version + the engines version,
--                 what project responses carry), strictly increasing per project;
--   kinds         what changed, comma-separated, sorted: engines, forum, project, runs, setup
--                 (see src/store/change-log.ts for which events are which);
--   data_as_of    the project's data_as_of after that commit;
--   committed_at  the writer's clock at the commit.
-- The writer keeps the last CHANGE_LOG_KEEP versions per project (src/store/change-log.ts). Neither
-- depends on the events alone (batching, wall time): the digest reads neither.

ALTER TABLE data_versions ADD COLUMN data_as_of TEXT;

CREATE TABLE project_changes (
  project_id    TEXT NOT NULL,
  version       INTEGER NOT NULL,
  kinds         TEXT NOT NULL,
  data_as_of    TEXT,
  committed_at  TEXT NOT NULL,
  PRIMARY KEY (project_id, version)
) WITHOUT ROWID;

-- An existing database: data-as-of from the versions of the facts stored per project. Every applied
-- event that changed a project left its occurred_at as the version of a row of that project (a
-- newer one replaces it with a newer time), so the greatest is the newest event time applied.
UPDATE data_versions SET data_as_of = nullif(max(
  coalesce((SELECT v_at FROM projects WHERE id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM project_engines WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM terms WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM segments WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM prompts WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM competitors WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(max(coalesce(s_at, ''), coalesce(c_at, ''))) FROM run_groups WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM prompt_runs WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(v_at) FROM forum_posts WHERE project_id = substr(scope, 9)), ''),
  coalesce((SELECT max(x.v_at) FROM forum_post_fields x JOIN forum_posts f ON f.id = x.post_id WHERE f.project_id = substr(scope, 9)), '')
), '') WHERE scope LIKE 'project:%';
