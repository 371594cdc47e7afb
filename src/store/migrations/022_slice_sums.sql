-- 022: a project's sums per day, engine, prompt and combination of dimensions, in integer columns.
--
-- Signals, breakdowns (group_by) and the dimensions list read every run of their range (its facts
-- as JSON: ~3 us a run, a second on a 500-prompt x 7-engine project over 60 days). These two tables
-- hold what they sum, keyed by what they group by, so a range reads one row per day and pair that
-- has runs (several runs of a day share it), never a run:
-- - slice_days: per (project, day, engine, prompt, dims) the succeeded runs, and the brand's sums
--   over those naming it (brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n:
--   contributions.ts, in fixed point, so they add and subtract exactly whatever the batching);
-- - slice_hits: the same per competitor a run names (each competitor once, at its best position).
-- Numbers, not ids: project, engine, prompt and competitor are keys.n (migration 013), dims the run's
-- dims.n (migration 015; 0 when it names none). Every succeeded run is in them, whatever counts: the
-- counting rule (non-deleted prompts, known engines, tracked competitors) is the reader's, so a change
-- of what counts changes no row here and is never counted again. The writer adds a batch's runs and
-- takes away the ones it superseded in the batch's transaction (src/store/slice-sums.ts); a row is
-- deleted when its runs fall to 0, so the rows are the same whatever the batching.
--
-- runs_slices (migration 016: each run's facts but the cited URLs, in an index entry, for filtered
-- sums) is dropped: the filtered sums read these rows, and what still reads a filtered range's runs
-- (the cited URLs of citations) reads them from the rows through runs_recent, as it did. Its entries
-- were ~320 bytes a run, these rows ~130.
DROP INDEX runs_slices;

CREATE TABLE slice_days (
  project          INTEGER NOT NULL,
  day              TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  dims             INTEGER NOT NULL,
  runs             INTEGER NOT NULL,
  brand_runs       INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, day, engine, prompt, dims)
) WITHOUT ROWID;

CREATE TABLE slice_hits (
  project          INTEGER NOT NULL,
  day              TEXT NOT NULL,
  engine           INTEGER NOT NULL,
  prompt           INTEGER NOT NULL,
  dims             INTEGER NOT NULL,
  competitor       INTEGER NOT NULL,
  runs             INTEGER NOT NULL,
  position_sum     INTEGER NOT NULL,
  rr_fixed         INTEGER NOT NULL,
  sentiment_fixed  INTEGER NOT NULL,
  sentiment_n      INTEGER NOT NULL,
  PRIMARY KEY (project, day, engine, prompt, dims, competitor)
) WITHOUT ROWID;

-- The stored runs, summed as the writer sums them (contributions.ts rrFixed, sentimentFixed: SQLite's
-- round() is half away from zero, as sentimentFixed is written to be).
INSERT OR IGNORE INTO keys (id) SELECT id FROM (
  SELECT facts ->> 0 AS id FROM runs WHERE status = 'succeeded'
  UNION SELECT facts ->> 1 FROM runs WHERE status = 'succeeded'
  UNION SELECT h.value ->> 0 FROM runs r, json_each(r.facts, '$[6]') h WHERE r.status = 'succeeded') ORDER BY id;

INSERT INTO slice_days (project, day, engine, prompt, dims, runs, brand_runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project, day, e.n, p.n, dims, count(*), count(pos), coalesce(sum(pos), 0),
    coalesce(sum(CAST(round(232792560.0 / pos) AS INTEGER)), 0),
    coalesce(sum(CASE WHEN pos IS NOT NULL AND sent IS NOT NULL THEN CAST((CASE WHEN sent < 0 THEN -1 ELSE 1 END) * round(abs(sent * 1000000.0)) AS INTEGER) END), 0),
    count(CASE WHEN pos IS NOT NULL AND sent IS NOT NULL THEN 1 END)
  FROM (SELECT project, substr(completed_at, 1, 10) AS day, facts ->> 0 AS engine, facts ->> 1 AS prompt, coalesce(dims, 0) AS dims,
      facts ->> 2 AS pos, facts ->> 3 AS sent FROM runs WHERE status = 'succeeded') r
    JOIN keys e ON e.id = r.engine JOIN keys p ON p.id = r.prompt
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;

INSERT INTO slice_hits (project, day, engine, prompt, dims, competitor, runs, position_sum, rr_fixed, sentiment_fixed, sentiment_n)
  SELECT project, day, e.n, p.n, dims, c.n, count(*), sum(pos), sum(CAST(round(232792560.0 / pos) AS INTEGER)),
    coalesce(sum(CASE WHEN sent IS NOT NULL THEN CAST((CASE WHEN sent < 0 THEN -1 ELSE 1 END) * round(abs(sent * 1000000.0)) AS INTEGER) END), 0),
    count(sent)
  FROM (SELECT r.project, substr(r.completed_at, 1, 10) AS day, r.facts ->> 0 AS engine, r.facts ->> 1 AS prompt, coalesce(r.dims, 0) AS dims,
      h.value ->> 0 AS competitor, h.value ->> 1 AS pos, h.value ->> 2 AS sent FROM runs r, json_each(r.facts, '$[6]') h WHERE r.status = 'succeeded') r
    JOIN keys e ON e.id = r.engine JOIN keys p ON p.id = r.prompt JOIN keys c ON c.id = r.competitor
  GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6;
