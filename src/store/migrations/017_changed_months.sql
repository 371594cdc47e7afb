-- 017: which months of a project's runs changed, and at which of its versions (for incremental exports).
--
-- An incremental export (src/export) rewrites only the months whose runs changed since the version its
-- manifest records. The change log (migration 006) says a project's runs changed, not where in time:
-- a run arriving late lands in an old month. One row per project and month of completed_at (UTC,
-- 'YYYY-MM'): the project's data_version ('project:<id>' scope) after the last commit that added,
-- replaced or moved a run of that month (both months of a moved run). Written by the change log's
-- writer in the batch's transaction (src/store/change-log.ts). Forum posts and the project's setup are
-- versioned per kind already (kindScope), so an export rewrites those whole when their kind moved.
-- Bookkeeping, like project_changes: the versions depend on the batching, so the digest reads none of it.
--
-- No backfill: a database older than this has never been exported, and a first export writes every month.
CREATE TABLE changed_months (
  project_id  TEXT NOT NULL,
  month       TEXT NOT NULL,
  version     INTEGER NOT NULL,
  PRIMARY KEY (project_id, month)
) WITHOUT ROWID;
