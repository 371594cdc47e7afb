-- 011: the write path at full speed: a run is written once, its days are read from it.
--
-- With one run per prompt, engine and day (what every schedule runs), the per-prompt day rows were
-- as many as the runs, their mentions and their citations themselves: ~7 aggregate rows per run
-- (agg_prompt_day 1, agg_competitor_day ~2.2, agg_url_day ~3.7) and agg_cited_day besides, most of
-- what the writer spent. They go. A range's days (the current window, the ragged edges of a longer
-- range) are summed from the runs themselves (src/readmodels/counted-runs.ts), through
-- prompt_runs_recent (project_id, completed_at): a week of a busy project is ~500 runs. What stays
-- is coarser, and written less often:
-- - agg_engine_day (008): per project, day and engine, added per batch (~50 rows a batch of 1,000
--   runs), now with the distinct counted prompts of the day (prompt_ids: sorted, comma-separated),
--   so the daily scores count prompts per day without reading runs;
-- - the week and month roll-ups (007, 009), written once per period: the latest period of each
--   project waits in the writer's memory, marked in rollup_pending (010), and readers read its days
--   from the runs (src/store/rollups.ts);
-- - run_refs: which prompts, engines and competitors a project's stored runs name. A change of
--   what counts (a prompt deleted, an engine first seen) counts a project again only when its runs
--   name the thing that changed; the day tables used to answer that.
-- - run_ids: where each run id's row is, filled in bulk; and a run's row keeps its event as it came (below).
-- Pending marks left by an older writer are counted again from the runs when the next writer
-- settles them: nothing that waited is lost.

DROP TABLE agg_prompt_day;
DROP TABLE agg_competitor_day;
DROP TABLE agg_url_day;
DROP TABLE agg_cited_day;

ALTER TABLE agg_engine_day ADD COLUMN prompt_ids TEXT NOT NULL DEFAULT '';
UPDATE agg_engine_day SET prompt_ids = coalesce((
  SELECT group_concat(DISTINCT r.prompt_id ORDER BY r.prompt_id) FROM prompt_runs r
  WHERE r.project_id = agg_engine_day.project_id AND r.completed_at >= agg_engine_day.day AND r.completed_at < agg_engine_day.day || 'U'
    AND r.engine_id = agg_engine_day.engine_id AND r.status = 'succeeded'
    AND r.prompt_id IN (SELECT id FROM prompts WHERE project_id = agg_engine_day.project_id AND deleted = 0)), '');

CREATE TABLE run_refs (
  kind        TEXT NOT NULL CHECK (kind IN ('prompt', 'engine', 'competitor')),
  ref_id      TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  PRIMARY KEY (kind, ref_id, project_id)
) WITHOUT ROWID;

INSERT OR IGNORE INTO run_refs (kind, ref_id, project_id) SELECT 'prompt', prompt_id, project_id FROM prompt_runs;
INSERT OR IGNORE INTO run_refs (kind, ref_id, project_id) SELECT 'engine', engine_id, project_id FROM prompt_runs;
INSERT OR IGNORE INTO run_refs (kind, ref_id, project_id)
  SELECT 'competitor', m.value ->> 'competitor_id', r.project_id FROM prompt_runs r, json_each(r.mentions) m
  WHERE m.value ->> 'entity_type' = 'competitor' AND m.value ->> 'competitor_id' IS NOT NULL;

-- prompt_runs without the index its TEXT PRIMARY KEY made: run ids are random UUIDs, so that index
-- took every new run at a random place and a batch's commit rewrote nearly all of its pages (more
-- than half of a replay's WAL). run_ids is the same lookup, filled in bulk: a writer keeps the runs it
-- inserted in memory and indexes them together (src/store/run-index.ts); every run up to
-- run_ids_through is in it, and a writer indexes the rest first when it finds any it does not hold.
--
-- And a row keeps the event as it came (`event`, its JSON) in place of the mentions and citations
-- rewritten as the API shows them and the hash of its data: the writer binds the bytes it received,
-- and the read models shape what they show (src/store/run-store.ts storedMentions, storedCitations). What
-- the aggregates take of a run is kept beside it in small JSON (`hits`, `cited`): a range's days and a
-- project counted again read those, not whole events. A stored row becomes an event of its own
-- columns; the rows keep their rowids (run_ids refers to them).
CREATE TABLE prompt_runs_011 (
  id                TEXT NOT NULL,
  run_group_id      TEXT NOT NULL,
  project_id        TEXT NOT NULL,
  prompt_id         TEXT NOT NULL,
  engine_id         TEXT NOT NULL,
  status            TEXT NOT NULL,
  completed_at      TEXT NOT NULL,     -- UTC ISO, as decoded (the event may give another offset)
  day               TEXT NOT NULL,     -- UTC day of completed_at
  brand_position    INTEGER,           -- best (lowest) brand position in this run, or NULL
  brand_sentiment   REAL,              -- sentiment of that best brand mention
  mention_count     INTEGER NOT NULL,
  citation_count    INTEGER NOT NULL,
  event             TEXT NOT NULL,     -- the prompt_run.completed event as received (JSON)
  hits              TEXT NOT NULL,     -- JSON [[competitor_id, position, sentiment]]: each competitor once, at its best
  cited             TEXT NOT NULL,     -- JSON [[url, title]]: each URL once, with the title of its first titled citation
  v_at              TEXT NOT NULL,
  v_id              TEXT NOT NULL
);
INSERT INTO prompt_runs_011 (rowid, id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day,
    brand_position, brand_sentiment, mention_count, citation_count, event, hits, cited, v_at, v_id)
  SELECT rowid, id, run_group_id, project_id, prompt_id, engine_id, status, completed_at, day,
    brand_position, brand_sentiment, mention_count, citation_count,
    json_object('event_id', v_id, 'type', 'prompt_run.completed', 'schema_version', 1, 'occurred_at', v_at,
      'data', json_object('id', id, 'run_group_id', run_group_id, 'project_id', project_id, 'prompt_id', prompt_id,
        'engine_id', engine_id, 'status', status, 'completed_at', completed_at, 'response_excerpt', response_excerpt,
        'mentions', json(mentions), 'citations', json(citations))),
    -- In order of each competitor's (URL's) first mention (citation), as src/store/run-store.ts lists them.
    (SELECT json_group_array(json_array(cid, pos, sent) ORDER BY first) FROM (
      SELECT m.value ->> 'competitor_id' AS cid, m.value ->> 'position' AS pos, m.value ->> 'sentiment' AS sent,
        row_number() OVER (PARTITION BY m.value ->> 'competitor_id' ORDER BY m.value ->> 'position', m.key) AS nth,
        min(m.key) OVER (PARTITION BY m.value ->> 'competitor_id') AS first
      FROM json_each(r.mentions) m WHERE m.value ->> 'entity_type' = 'competitor' AND m.value ->> 'competitor_id' IS NOT NULL) WHERE nth = 1),
    (SELECT json_group_array(json_array(url, title) ORDER BY first) FROM (
      SELECT c.value ->> 'url' AS url, nullif(c.value ->> 'title', '') AS title,
        row_number() OVER (PARTITION BY c.value ->> 'url' ORDER BY nullif(c.value ->> 'title', '') IS NULL, c.key) AS nth,
        min(c.key) OVER (PARTITION BY c.value ->> 'url') AS first
      FROM json_each(r.citations) c) WHERE nth = 1),
    v_at, v_id
  FROM prompt_runs r ORDER BY rowid;
DROP TABLE prompt_runs;
ALTER TABLE prompt_runs_011 RENAME TO prompt_runs;
CREATE INDEX prompt_runs_by_group ON prompt_runs (run_group_id, id);
CREATE INDEX prompt_runs_recent ON prompt_runs (project_id, completed_at DESC, id);

CREATE TABLE run_ids (
  id   TEXT PRIMARY KEY,
  run  INTEGER NOT NULL         -- prompt_runs.rowid
) WITHOUT ROWID;
INSERT INTO run_ids (id, run) SELECT id, rowid FROM prompt_runs ORDER BY id;

-- Small values the store keeps about itself (not read-model data).
CREATE TABLE store_meta (
  key    TEXT PRIMARY KEY,
  value  INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta (key, value) VALUES ('run_ids_through', (SELECT coalesce(max(rowid), 0) FROM prompt_runs));
