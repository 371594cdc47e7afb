-- 024: a project's runs per dimensions combination over its whole history, in rows that do not grow with it.
--
-- /dimensions lists each value the project's counted runs name, with its runs: it summed every
-- slice_days row of the project (a row per run, about: 636k rows, ~280 ms on a 300-prompt x
-- 6-engine year). These tables hold the same runs summed over every day, of the runs naming a
-- dimension (dims != 0) only, whatever counts (the counting rule stays the reader's, as for slice_days):
-- - slice_dims: per (project, dims) the runs of every engine and prompt (a row per combination: ~660);
-- - slice_pairs: per (project, engine, prompt) the same runs (a row per pair: ~1,800);
-- - slice_pair_dims: per (project, engine, prompt, dims) (a row per pair and combination: ~164k).
-- A read takes the combinations' totals and subtracts the rows of the pairs that do not count (a
-- deleted prompt, another project's, an engine not known yet): a few rows when every pair counts,
-- never the days. Kept by the writer with slice_days, in the batch's transaction and with the same
-- moves (src/store/slice-dims.ts); a row is deleted when its runs fall to 0, so the rows are the same
-- whatever the batching. A change of what counts changes no row here and is never counted again.
CREATE TABLE slice_dims (
  project  INTEGER NOT NULL,
  dims     INTEGER NOT NULL,
  runs     INTEGER NOT NULL,
  PRIMARY KEY (project, dims)
) WITHOUT ROWID;

CREATE TABLE slice_pairs (
  project  INTEGER NOT NULL,
  engine   INTEGER NOT NULL,
  prompt   INTEGER NOT NULL,
  runs     INTEGER NOT NULL,
  PRIMARY KEY (project, engine, prompt)
) WITHOUT ROWID;

CREATE TABLE slice_pair_dims (
  project  INTEGER NOT NULL,
  engine   INTEGER NOT NULL,
  prompt   INTEGER NOT NULL,
  dims     INTEGER NOT NULL,
  runs     INTEGER NOT NULL,
  PRIMARY KEY (project, engine, prompt, dims)
) WITHOUT ROWID;

INSERT INTO slice_dims (project, dims, runs)
  SELECT project, dims, sum(runs) FROM slice_days WHERE dims != 0 GROUP BY 1, 2 ORDER BY 1, 2;
INSERT INTO slice_pairs (project, engine, prompt, runs)
  SELECT project, engine, prompt, sum(runs) FROM slice_days WHERE dims != 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
INSERT INTO slice_pair_dims (project, engine, prompt, dims, runs)
  SELECT project, engine, prompt, dims, sum(runs) FROM slice_days WHERE dims != 0 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
