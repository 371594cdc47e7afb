-- Run group counts per (group, project): a prompt run names its run group and its project, and an
-- upstream mistake can make them disagree. Counting only the runs of the group's own project (the
-- join in the read model) keeps another project's runs, and so another account's, out of a group.
DROP TABLE agg_run_group;
CREATE TABLE agg_run_group (
  run_group_id      TEXT NOT NULL,
  project_id        TEXT NOT NULL,
  prompt_run_count  INTEGER NOT NULL,
  succeeded_count   INTEGER NOT NULL,
  failed_count      INTEGER NOT NULL,
  PRIMARY KEY (run_group_id, project_id)
) WITHOUT ROWID;
INSERT INTO agg_run_group (run_group_id, project_id, prompt_run_count, succeeded_count, failed_count)
  SELECT run_group_id, project_id, count(*), sum(status = 'succeeded'), sum(status = 'failed')
  FROM prompt_runs GROUP BY run_group_id, project_id;
