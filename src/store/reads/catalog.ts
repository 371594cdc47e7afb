// What the read models read of a project's setup: the project itself, its prompts, competitors,
// segments, terms and tracked engines, and the engines' names. Row shapes are the caller's (T):
// the body schemas (src/readmodels/bodies.gen.ts) name the columns these SELECTs return.
import type { ReadStore } from '../read-store';

/** Projects an account sees: the ones it owns and the ones shared with it; never deleted ones. Binds @account. */
const VISIBLE_PROJECTS = `SELECT p.* FROM projects p
  WHERE p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id = @account
    OR EXISTS (SELECT 1 FROM project_access g WHERE g.project_id = p.id AND g.account_id = @account AND g.granted = 1))
  ORDER BY p.name, p.id`;

/** The projects `accountId` sees, by name then id: every column of their rows. */
export function visibleProjects<T>(store: ReadStore, accountId: string): T[] {
  return store.all<T>(VISIBLE_PROJECTS, { account: accountId });
}

const PROJECT = `SELECT * FROM projects
  WHERE id = ? AND deleted = 0 AND name IS NOT NULL`;

/** A project's row, unless it is deleted or has no name yet (an update before its upsert). */
export function projectRow<T>(store: ReadStore, projectId: string): T | undefined {
  return store.get<T>(PROJECT, projectId);
}

const PROJECT_NAME = 'SELECT name FROM projects WHERE id = ?';

export function projectName(store: ReadStore, projectId: string): string | undefined {
  return store.value<string>(PROJECT_NAME, projectId);
}

const PROMPTS = `SELECT id, project_id, text, segment_ids, active, created_at, updated_at
  FROM prompts
  WHERE project_id = ? AND deleted = 0
  ORDER BY text, id`;

/** The project's prompts that are not deleted, by text then id (segment_ids as JSON text, active 0/1). */
export function promptsOf<T>(store: ReadStore, projectId: string): T[] {
  return store.all<T>(PROMPTS, projectId);
}

const PROMPT_TEXTS = 'SELECT id, text FROM prompts WHERE project_id = ?';

/** The text of each prompt of a project (deleted ones included), by id. */
export function promptTexts(store: ReadStore, projectId: string): Map<string, string> {
  return new Map(store.rows<[string, string]>(PROMPT_TEXTS, projectId));
}

const COUNTED_PROMPTS = 'SELECT id FROM prompts WHERE project_id = ? AND deleted = 0';

/** The ids of the project's prompts that are not deleted: the prompts whose runs count. */
export function countedPromptIds(store: ReadStore, projectId: string): string[] {
  return store.column<string>(COUNTED_PROMPTS, projectId);
}

const COMPETITORS = `SELECT id, project_id, name, domain, aliases, created_at, updated_at
  FROM competitors
  WHERE project_id = ? AND deleted = 0
  ORDER BY name, id`;

/** The project's competitors that are not deleted, by name then id (aliases as JSON text). */
export function competitorsOf<T>(store: ReadStore, projectId: string): T[] {
  return store.all<T>(COMPETITORS, projectId);
}

const TRACKED_COMPETITORS = 'SELECT id, name FROM competitors WHERE project_id = ? AND deleted = 0 ORDER BY name, id';

/** The project's tracked (non-deleted) competitors, by name then id. */
export function trackedCompetitors(store: ReadStore, projectId: string): Array<{ id: string; name: string }> {
  return store.all(TRACKED_COMPETITORS, projectId);
}

const TRACKED_IDS = 'SELECT id FROM competitors WHERE project_id = ? AND deleted = 0';

/** The ids of the project's tracked (non-deleted) competitors. */
export function trackedCompetitorIds(store: ReadStore, projectId: string): string[] {
  return store.column<string>(TRACKED_IDS, projectId);
}

/**
 * Engines the project tracks now. `since` is the time of the winning tracked event, so an engine
 * untracked and tracked again reports the newer start. An engine not upserted yet does not show.
 */
const TRACKED_ENGINES = `SELECT e.id, e.name, e.provider, e.model, pe.since AS tracked_since
  FROM project_engines pe JOIN engines e ON e.id = pe.engine_id
  WHERE pe.project_id = ? AND pe.tracked = 1
  ORDER BY e.name, e.id`;

/** The engines the project tracks, by name then id. */
export function trackedEngines<T>(store: ReadStore, projectId: string): T[] {
  return store.all<T>(TRACKED_ENGINES, projectId);
}

const KNOWN_ENGINES = 'SELECT id FROM engines';

/** Every known engine's id: a run of an unknown engine does not count. */
export function knownEngineIds(store: ReadStore): string[] {
  return store.column<string>(KNOWN_ENGINES);
}

const ENGINE_NAMES = 'SELECT id, name FROM engines';

/** Each known engine's name, by id. */
export function engineNames(store: ReadStore): Map<string, string> {
  return new Map(store.all<{ id: string; name: string }>(ENGINE_NAMES).map((e) => [e.id, e.name]));
}

/**
 * Active, non-deleted segments with the number of non-deleted prompts (active or not) of the same
 * project that list them. The prompts' own segment_ids array is the source of truth, read with
 * json_each; DISTINCT guards against an id listed twice in one prompt.
 */
const SEGMENTS = `SELECT s.id, s.project_id, s.name, s.description, s.created_at, s.updated_at,
    (SELECT count(DISTINCT p.id) FROM prompts p, json_each(p.segment_ids) j
      WHERE p.project_id = s.project_id AND p.deleted = 0 AND j.value = s.id) AS prompt_count
  FROM segments s
  WHERE s.project_id = ? AND s.active = 1 AND s.deleted = 0
  ORDER BY s.name, s.id`;

/** The project's active segments with their prompt counts, by name then id. */
export function segmentsOf<T>(store: ReadStore, projectId: string): T[] {
  return store.all<T>(SEGMENTS, projectId);
}

const ACTIVE_SEGMENTS = `SELECT id, name FROM segments
  WHERE project_id = ? AND active = 1 AND deleted = 0
  ORDER BY name, id`;

/** The project's active, non-deleted segments, by name then id. */
export function activeSegments(store: ReadStore, projectId: string): Array<{ id: string; name: string }> {
  return store.all<{ id: string; name: string }>(ACTIVE_SEGMENTS, projectId);
}

/**
 * Which prompts belong to which segment: the prompt's own segment_ids array is the source of truth
 * (read with json_each, as SEGMENTS does); DISTINCT guards against an id listed twice.
 */
const SEGMENT_PROMPTS = `SELECT DISTINCT j.value AS segment_id, p.id AS prompt_id
  FROM prompts p, json_each(p.segment_ids) j
  WHERE p.project_id = ? AND p.deleted = 0
  ORDER BY segment_id, prompt_id`;

/** Each (segment, non-deleted prompt listing it) of the project, by segment then prompt. */
export function segmentPrompts(store: ReadStore, projectId: string): Array<{ segment_id: string; prompt_id: string }> {
  return store.all(SEGMENT_PROMPTS, projectId);
}

const TERMS = `SELECT id, project_id, value, kind, created_at
  FROM terms
  WHERE project_id = ? AND deleted = 0
  ORDER BY value, id`;

/** The project's brand and domain terms that are not deleted, by value then id. */
export function termsOf<T>(store: ReadStore, projectId: string): T[] {
  return store.all<T>(TERMS, projectId);
}

const OWN_DOMAINS = `SELECT domain FROM projects WHERE id = @project AND domain IS NOT NULL
  UNION SELECT value FROM terms WHERE project_id = @project AND kind = 'domain' AND deleted = 0 AND value IS NOT NULL`;

/** The project's domain and its non-deleted 'domain' terms, as stored (not normalized). */
export function ownDomainValues(store: ReadStore, projectId: string): string[] {
  return store.all<{ domain: string }>(OWN_DOMAINS, { project: projectId }).map((r) => r.domain);
}

const COMPETITOR_DOMAINS = `SELECT domain FROM competitors
  WHERE project_id = ? AND deleted = 0 AND domain IS NOT NULL`;

/** Domains of the project's non-deleted competitors, as stored (not normalized). */
export function competitorDomainValues(store: ReadStore, projectId: string): string[] {
  return store.all<{ domain: string }>(COMPETITOR_DOMAINS, projectId).map((r) => r.domain);
}
