-- 001: facts, per-run derived rows, mergeable aggregates, ingestion bookkeeping.
--
-- Conventions
--   * Facts are upserted by natural id. (v_at, v_id) is the version of the winning event:
--     occurred_at (UTC ISO, fixed width, so text order is time order) then event_id.
--     An event is applied only when its version is greater: last writer wins, in any order.
--   * Entities whose events carry no created_at get created_at = the earliest occurred_at seen,
--     updated_at = occurred_at of the winning upsert. Both are order-independent.
--   * Deletes are tombstones (deleted = 1) that carry a version, so a late, older upsert
--     cannot resurrect a deleted row and a newer one can.
--   * All times are UTC ISO strings 'YYYY-MM-DDTHH:MM:SS.sssZ'; days are 'YYYY-MM-DD'.

CREATE TABLE accounts (
  id    TEXT PRIMARY KEY,
  name  TEXT NOT NULL,
  v_at  TEXT NOT NULL,
  v_id  TEXT NOT NULL
);

-- The plaintext key never reaches this service; keys are found by their SHA-256.
CREATE TABLE api_keys (
  key_id      TEXT PRIMARY KEY,
  account_id  TEXT,
  key_sha256  TEXT,
  label       TEXT,
  issued_at   TEXT,
  v_at        TEXT,            -- version of api_key.issued
  v_id        TEXT,
  revoked_at  TEXT,
  r_at        TEXT,            -- version of api_key.revoked
  r_id        TEXT
);
CREATE INDEX api_keys_by_hash ON api_keys (key_sha256);

CREATE TABLE projects (
  id                TEXT PRIMARY KEY,
  company_id        TEXT,
  name              TEXT,
  domain            TEXT,
  description       TEXT,
  category_summary  TEXT,
  status            TEXT,
  created_at        TEXT,
  updated_at        TEXT,
  deleted           INTEGER NOT NULL DEFAULT 0,
  v_at              TEXT NOT NULL,
  v_id              TEXT NOT NULL
);
CREATE INDEX projects_by_company ON projects (company_id);

-- Accounts that can see a project they do not own.
CREATE TABLE project_access (
  project_id  TEXT NOT NULL,
  account_id  TEXT NOT NULL,
  granted     INTEGER NOT NULL,
  v_at        TEXT NOT NULL,
  v_id        TEXT NOT NULL,
  PRIMARY KEY (project_id, account_id)
) WITHOUT ROWID;
CREATE INDEX project_access_by_account ON project_access (account_id, project_id);

CREATE TABLE engines (
  id        TEXT PRIMARY KEY,
  name      TEXT NOT NULL,
  provider  TEXT NOT NULL,
  model     TEXT,
  v_at      TEXT NOT NULL,
  v_id      TEXT NOT NULL
);

CREATE TABLE project_engines (
  project_id  TEXT NOT NULL,
  engine_id   TEXT NOT NULL,
  tracked     INTEGER NOT NULL,
  since       TEXT NOT NULL,    -- `at` of the winning tracked/untracked event
  v_at        TEXT NOT NULL,
  v_id        TEXT NOT NULL,
  PRIMARY KEY (project_id, engine_id)
) WITHOUT ROWID;
CREATE INDEX project_engines_by_engine ON project_engines (engine_id);

CREATE TABLE terms (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL,
  value       TEXT,
  kind        TEXT,
  created_at  TEXT,
  deleted     INTEGER NOT NULL DEFAULT 0,
  v_at        TEXT NOT NULL,
  v_id        TEXT NOT NULL
);
CREATE INDEX terms_by_project ON terms (project_id);

CREATE TABLE segments (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL,
  name         TEXT,
  description  TEXT,
  active       INTEGER,
  created_at   TEXT,
  updated_at   TEXT,
  deleted      INTEGER NOT NULL DEFAULT 0,
  v_at         TEXT NOT NULL,
  v_id         TEXT NOT NULL
);
CREATE INDEX segments_by_project ON segments (project_id);

CREATE TABLE prompts (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL,
  text         TEXT,
  segment_ids  TEXT,            -- JSON array, as in the event
  active       INTEGER,
  created_at   TEXT,
  updated_at   TEXT,
  deleted      INTEGER NOT NULL DEFAULT 0,
  v_at         TEXT NOT NULL,
  v_id         TEXT NOT NULL
);
CREATE INDEX prompts_by_project ON prompts (project_id);

-- prompts.segment_ids unrolled, for joins (rewritten with its prompt).
CREATE TABLE prompt_segments (
  prompt_id   TEXT NOT NULL,
  segment_id  TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  PRIMARY KEY (prompt_id, segment_id)
) WITHOUT ROWID;
CREATE INDEX prompt_segments_by_project ON prompt_segments (project_id, segment_id);

CREATE TABLE competitors (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL,
  name        TEXT,
  domain      TEXT,
  aliases     TEXT,             -- JSON array
  created_at  TEXT,
  updated_at  TEXT,
  deleted     INTEGER NOT NULL DEFAULT 0,
  v_at        TEXT NOT NULL,
  v_id        TEXT NOT NULL
);
CREATE INDEX competitors_by_project ON competitors (project_id);

-- run_group.started and run_group.completed are separate facts with separate versions.
CREATE TABLE run_groups (
  id            TEXT PRIMARY KEY,
  project_id    TEXT,
  trigger       TEXT,
  started_at    TEXT,
  s_at          TEXT,
  s_id          TEXT,
  completed_at  TEXT,
  status        TEXT,           -- completed | failed | partial, from run_group.completed
  c_at          TEXT,
  c_id          TEXT
);
CREATE INDEX run_groups_by_project ON run_groups (project_id, started_at);

CREATE TABLE prompt_runs (
  id                TEXT PRIMARY KEY,
  run_group_id      TEXT NOT NULL,
  project_id        TEXT NOT NULL,
  prompt_id         TEXT NOT NULL,
  engine_id         TEXT NOT NULL,
  status            TEXT NOT NULL,
  completed_at      TEXT NOT NULL,
  day               TEXT NOT NULL,     -- UTC day of completed_at
  response_excerpt  TEXT,
  brand_position    INTEGER,           -- best (lowest) brand position in this run, or NULL
  brand_sentiment   REAL,              -- sentiment of that best brand mention
  mention_count     INTEGER NOT NULL,
  citation_count    INTEGER NOT NULL,
  -- The analyser's mentions and citations as it reported them, normalized (every field present,
  -- null where absent; citations carry their domain). One row per run keeps ingestion to a few
  -- b-tree writes per event; the read models that list them read these arrays.
  mentions          TEXT NOT NULL,     -- JSON [{entity_type, competitor_id, name, position, sentiment, snippet}]
  citations         TEXT NOT NULL,     -- JSON [{url, domain, title, position}]
  fact_hash         TEXT NOT NULL,     -- hash of the event data: a retry under a new event id changes nothing
  v_at              TEXT NOT NULL,
  v_id              TEXT NOT NULL
);
CREATE INDEX prompt_runs_bucket ON prompt_runs (project_id, engine_id, day, prompt_id, id);
CREATE INDEX prompt_runs_by_group ON prompt_runs (run_group_id, id);
CREATE INDEX prompt_runs_recent ON prompt_runs (project_id, completed_at DESC, id);

-- Mergeable aggregates over SUCCEEDED runs, one row per bucket
-- (project x day x engine x prompt [x competitor | x url]). Any engine subset or window is a SUM
-- over rows. Rows are recomputed from the runs of a bucket (and their mentions and citations)
-- whenever a batch touches it, summing in run-id order, so the bytes never depend on batching or
-- arrival order. Within one run an entity counts once, at its best position; a URL once.
CREATE TABLE agg_prompt_day (
  project_id     TEXT NOT NULL,
  day            TEXT NOT NULL,
  engine_id      TEXT NOT NULL,
  prompt_id      TEXT NOT NULL,
  runs           INTEGER NOT NULL,  -- succeeded runs
  brand_runs     INTEGER NOT NULL,  -- runs whose answer mentions the brand
  position_sum   INTEGER NOT NULL,  -- sum of best brand positions over brand_runs
  rr_sum         REAL NOT NULL,     -- sum of 1/best position over brand_runs
  sentiment_sum  REAL NOT NULL,
  sentiment_n    INTEGER NOT NULL,  -- brand_runs whose best mention carries a sentiment
  PRIMARY KEY (project_id, day, engine_id, prompt_id)
) WITHOUT ROWID;

CREATE TABLE agg_competitor_day (
  project_id     TEXT NOT NULL,
  day            TEXT NOT NULL,
  engine_id      TEXT NOT NULL,
  prompt_id      TEXT NOT NULL,
  competitor_id  TEXT NOT NULL,
  runs           INTEGER NOT NULL,  -- succeeded runs that mention this competitor
  position_sum   INTEGER NOT NULL,
  rr_sum         REAL NOT NULL,
  sentiment_sum  REAL NOT NULL,
  sentiment_n    INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, engine_id, prompt_id, competitor_id)
) WITHOUT ROWID;

CREATE TABLE agg_url_day (
  project_id  TEXT NOT NULL,
  day         TEXT NOT NULL,
  engine_id   TEXT NOT NULL,
  prompt_id   TEXT NOT NULL,
  url         TEXT NOT NULL,
  domain      TEXT NOT NULL,
  runs        INTEGER NOT NULL,     -- succeeded runs citing the URL
  first_at    TEXT NOT NULL,
  last_at     TEXT NOT NULL,
  title       TEXT,                 -- title of the latest citation that had one
  PRIMARY KEY (project_id, day, engine_id, prompt_id, url)
) WITHOUT ROWID;

CREATE TABLE agg_run_group (
  run_group_id      TEXT PRIMARY KEY,
  prompt_run_count  INTEGER NOT NULL,
  succeeded_count   INTEGER NOT NULL,
  failed_count      INTEGER NOT NULL
) WITHOUT ROWID;

-- forum_post.discovered fields; the mutable fields live in forum_post_fields.
CREATE TABLE forum_posts (
  id             TEXT PRIMARY KEY,
  project_id     TEXT,
  platform       TEXT,
  url            TEXT,
  title          TEXT,
  community      TEXT,
  author         TEXT,
  posted_at      TEXT,
  discovered_at  TEXT,
  matched_terms  TEXT,          -- JSON array
  v_at           TEXT,
  v_id           TEXT
);
CREATE INDEX forum_posts_by_project ON forum_posts (project_id, discovered_at);

-- Last writer wins per field (status, relevance, intent, comment_count, score): a
-- forum_post.updated that sets only `status` must not undo a newer `score`.
CREATE TABLE forum_post_fields (
  post_id  TEXT NOT NULL,
  field    TEXT NOT NULL,
  value    TEXT,                -- JSON
  v_at     TEXT NOT NULL,
  v_id     TEXT NOT NULL,
  PRIMARY KEY (post_id, field)
) WITHOUT ROWID;

-- Ingestion bookkeeping (not part of the read-model digest).

-- Next position to read per source: 'file:<path>' (line number) or 'kafka:<topic>:<partition>'
-- (offset). Written in the same transaction as the facts it produced.
CREATE TABLE source_positions (
  source    TEXT PRIMARY KEY,
  position  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE dead_letters (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  source       TEXT NOT NULL,
  position     INTEGER NOT NULL,
  reason       TEXT NOT NULL,   -- unparseable | invalid_envelope | unknown_type | unsupported_schema_version | invalid_payload
  detail       TEXT NOT NULL,
  event_id     TEXT,
  type         TEXT,
  raw          BLOB NOT NULL,
  received_at  TEXT NOT NULL,
  UNIQUE (source, position)
);

-- Per scope ('project:<id>', 'catalog', 'keys', 'engines'): bumped in the batch that changed that scope's data.
CREATE TABLE data_versions (
  scope       TEXT PRIMARY KEY,
  version     INTEGER NOT NULL,
  updated_at  TEXT NOT NULL
) WITHOUT ROWID;
