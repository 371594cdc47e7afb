// What each event type other than a prompt run does to the facts: the per-type handlers the
// projector dispatches to (a prompt run, nearly every event, is applied by the projector itself),
// with the tables they write and the changes they note. Kept apart from the projector, which owns
// the batch: its transaction, savepoints, positions, aggregates, change log and trend.
import type { EventDataByType, EventType } from '../events';
import type { Db } from './db';
import type { Aggregator } from './aggregates';
import { entityTables, ForumStore, PairTable, SplitFactTable, type EntityTables } from './facts';
import { EntityTable } from './entities';
import type { RunFacts } from './run-store';
import type { ChangeSet, Outcome, Version } from './versions';

/** What one event's handler touched, merged into the batch only when the event succeeds. */
export interface Effects {
  changes: ChangeSet;
  /** Runs whose contribution joins the aggregates, and runs (old versions) whose contribution leaves. */
  added: RunFacts[];
  removed: RunFacts[];
}

type Handler<T extends EventType> = (data: EventDataByType[T], v: Version, fx: Effects) => Outcome;
/** Prompt runs arrive precomputed (see precompute.ts) and are applied by the projector, not a handler. */
export type Handlers = { [T in Exclude<EventType, 'prompt_run.completed'>]: Handler<T> };
export type AnyHandler = Handler<EventType>;

const json = (v: unknown): string => JSON.stringify(v);
const bool = (b: boolean): number => (b ? 1 : 0);

export class EventHandlers {
  /** The handler of each event type. */
  readonly byType: Handlers;
  private readonly entities: EntityTables;
  private readonly access: PairTable;
  private readonly tracking: PairTable;
  private readonly keys: SplitFactTable;
  private readonly webhooks: EntityTable;
  private readonly groups: SplitFactTable;
  private readonly forum: ForumStore;
  private readonly stmts;

  constructor(db: Db, private readonly aggregator: Aggregator) {
    this.entities = entityTables(db);
    this.access = new PairTable(db, 'project_access', ['project_id', 'account_id'], 'granted');
    this.tracking = new PairTable(db, 'project_engines', ['project_id', 'engine_id'], 'tracked', ['since']);
    this.keys = new SplitFactTable(db, 'api_keys', 'key_id', {
      issued: { columns: ['account_id', 'key_sha256', 'label', 'issued_at'], version: ['v_at', 'v_id'] },
      revoked: { columns: ['revoked_at'], version: ['r_at', 'r_id'] },
    });
    this.groups = new SplitFactTable(db, 'run_groups', 'id', {
      started: { columns: ['project_id', 'trigger', 'started_at'], version: ['s_at', 's_id'] },
      completed: { columns: ['completed_at', 'status'], version: ['c_at', 'c_id'] },
    });
    this.webhooks = new EntityTable(db, { table: 'webhooks', columns: ['account_id', 'project_ids', 'url', 'secret', 'events'], deletable: true });
    this.forum = new ForumStore(db);
    this.stmts = {
      groupProject: db.prepare('SELECT project_id FROM run_groups WHERE id = ?').pluck(),
      clearPromptSegments: db.prepare('DELETE FROM prompt_segments WHERE prompt_id = ?'),
      putPromptSegment: db.prepare('INSERT INTO prompt_segments (prompt_id, segment_id, project_id) VALUES (?, ?, ?)'),
    };
    this.byType = this.makeHandlers();
  }

  /** Marks the project changed when the outcome says data changed. */
  private static touched(outcome: Outcome, fx: Effects, projectId: string | null | undefined): Outcome {
    if (outcome === 'applied') fx.changes.project(projectId);
    return outcome;
  }

  private makeHandlers(): Handlers {
    const t = this.entities;
    const touched = EventHandlers.touched;
    return {
      'account.upserted': (d, v) => t.accounts.upsert(d.account_id, v, { name: d.name }),
      'api_key.issued': (d, v, fx) => this.keyChange(this.keys.apply('issued', d.key_id, v, {
        account_id: d.account_id, key_sha256: d.key_sha256, label: d.label ?? null, issued_at: d.issued_at,
      }), fx),
      'api_key.revoked': (d, v, fx) => this.keyChange(this.keys.apply('revoked', d.key_id, v, { revoked_at: d.revoked_at }), fx),
      'project.upserted': (d, v, fx) => this.catalogChange(t.projects.upsert(d.id, v, {
        company_id: d.company_id, name: d.name, domain: d.domain ?? null, description: d.description ?? null,
        category_summary: d.category_summary ?? null, status: d.status, created_at: d.created_at, updated_at: d.updated_at,
      }), fx, d.id),
      'project.deleted': (d, v, fx) => this.catalogChange(t.projects.remove(d.id, v, {}), fx, d.id),
      'project.access_granted': (d, v, fx) => this.catalogChange(this.access.apply(d.project_id, d.account_id, v, { granted: 1 }), fx, null),
      'project.access_revoked': (d, v, fx) => this.catalogChange(this.access.apply(d.project_id, d.account_id, v, { granted: 0 }), fx, null),
      // Subscriptions change no read model (no body shows them): no data version moves.
      'webhook.subscribed': (d, v) => this.webhooks.upsert(d.id, v, {
        account_id: d.account_id, project_ids: d.project_ids ? json([...d.project_ids].sort()) : null, url: d.url, secret: d.secret,
        events: json([...d.events].sort()),
      }),
      'webhook.unsubscribed': (d, v) => this.webhooks.remove(d.id, v, { account_id: d.account_id }),
      // Engines are shared by every project: their own scope, which every project's bodies depend on.
      'engine.upserted': (d, v, fx) => {
        const known = t.engines.current(d.id) !== undefined;
        const outcome = t.engines.upsert(d.id, v, { name: d.name, provider: d.provider, model: d.model ?? null });
        if (!known && outcome === 'applied') this.aggregator.engineAdded(d.id);
        if (outcome === 'applied') fx.changes.engines();
        return outcome;
      },
      'project.engine_tracked': (d, v, fx) => touched(this.tracking.apply(d.project_id, d.engine_id, v, { tracked: 1, since: d.at }), fx, d.project_id),
      'project.engine_untracked': (d, v, fx) => touched(this.tracking.apply(d.project_id, d.engine_id, v, { tracked: 0, since: d.at }), fx, d.project_id),
      'term.upserted': (d, v, fx) => EventHandlers.moving(t.terms, d.id, d.project_id, fx, () => t.terms.upsert(d.id, v, { project_id: d.project_id, value: d.value, kind: d.kind })),
      'term.deleted': (d, v, fx) => EventHandlers.moving(t.terms, d.id, d.project_id, fx, () => t.terms.remove(d.id, v, { project_id: d.project_id })),
      'segment.upserted': (d, v, fx) => EventHandlers.moving(t.segments, d.id, d.project_id, fx, () => t.segments.upsert(d.id, v, {
        project_id: d.project_id, name: d.name, description: d.description ?? null, active: bool(d.active),
      })),
      'segment.deleted': (d, v, fx) => EventHandlers.moving(t.segments, d.id, d.project_id, fx, () => t.segments.remove(d.id, v, { project_id: d.project_id })),
      'prompt.upserted': (d, v, fx) => this.promptChange(this.counting('prompt', t.prompts, d.id, fx, () => t.prompts.upsert(d.id, v, {
        project_id: d.project_id, text: d.text, segment_ids: json([...d.segment_ids].sort()), active: bool(d.active),
      })), fx, d.id, d.project_id),
      'prompt.deleted': (d, v, fx) => this.promptChange(this.counting('prompt', t.prompts, d.id, fx, () => t.prompts.remove(d.id, v, { project_id: d.project_id })), fx, d.id, d.project_id),
      'competitor.upserted': (d, v, fx) => touched(this.counting('competitor', t.competitors, d.id, fx, () => t.competitors.upsert(d.id, v, {
        project_id: d.project_id, name: d.name, domain: d.domain ?? null, aliases: json(d.aliases),
      })), fx, d.project_id),
      'competitor.deleted': (d, v, fx) => touched(this.counting('competitor', t.competitors, d.id, fx, () => t.competitors.remove(d.id, v, { project_id: d.project_id })), fx, d.project_id),
      'run_group.started': (d, v, fx) => {
        const before = this.stmts.groupProject.get(d.id);
        const outcome = this.groups.apply('started', d.id, v, { project_id: d.project_id, trigger: d.trigger ?? null, started_at: d.started_at });
        EventHandlers.left(fx, outcome, before, d.project_id);
        return touched(outcome, fx, d.project_id); // applied: the group is the event's project's now
      },
      'run_group.completed': (d, v, fx) => this.groupChange(this.groups.apply('completed', d.id, v, {
        completed_at: d.completed_at, status: d.status,
      }), fx, d.id),
      'forum_post.discovered': (d, v, fx) => {
        const before = this.forum.project(d.id);
        const a = this.forum.posts.apply('discovered', d.id, v, {
          project_id: d.project_id, platform: d.platform, url: d.url, title: d.title, community: d.community ?? null,
          author: d.author ?? null, posted_at: d.posted_at ?? null, discovered_at: d.discovered_at, matched_terms: json(d.matched_terms),
        });
        // Optional fields a (re)discovery leaves out are not reported: the latest value reported stays.
        const b = this.forum.applyFields(d.id, v, {
          relevance: d.relevance, intent: d.intent,
          ...(d.comment_count !== undefined ? { comment_count: d.comment_count } : {}),
          ...(d.score !== undefined ? { score: d.score } : {}),
        });
        EventHandlers.left(fx, a, before, d.project_id);
        return touched(strongest(a, b), fx, d.project_id);
      },
      'forum_post.updated': (d, v, fx) => {
        const { id, project_id: _p, ...fields } = d;
        return touched(this.forum.applyFields(id, v, fields), fx, this.forum.project(id));
      },
    };
  }

  /**
   * A prompt or competitor change that may move what counts (COUNTED_RUNS, tracked competitors): its
   * project or deleted flag changed, or it is new. The aggregator then counts the projects concerned
   * again (their engine-day sums and cited URLs, migrations 008 and 009); an edit of a name or text does
   * not. A move changes the project it left as well as the one it joined.
   */
  private counting(table: 'prompt' | 'competitor', rows: EntityTable, id: string, fx: Effects, write: () => Outcome): Outcome {
    const before = rows.current(id);
    const outcome = write();
    if (outcome !== 'applied') return outcome;
    const after = rows.current(id)!;
    EventHandlers.left(fx, outcome, before?.project_id, after.project_id);
    if (before && before.project_id === after.project_id && before.deleted === after.deleted) return outcome;
    if (before) this.aggregator.countingChanged(table, before.project_id as string, id);
    this.aggregator.countingChanged(table, after.project_id as string, id);
    return outcome;
  }

  /**
   * A write that moved an entity (a term, segment, prompt, competitor, forum post or run group) to
   * another project: the project it left changed too (its lists no longer hold it), not only the one
   * it joined.
   */
  private static left(fx: Effects, outcome: Outcome, before: unknown, after: unknown): void {
    if (outcome === 'applied' && typeof before === 'string' && before !== after) fx.changes.project(before);
  }

  /**
   * A term or segment written by an event of `projectId`: when applied, the row is that project's (the
   * event's version won), which changed, and so did the project it may have left (left).
   */
  private static moving(rows: EntityTable, id: string, projectId: string, fx: Effects, write: () => Outcome): Outcome {
    const before = rows.current(id)?.project_id;
    const outcome = write();
    EventHandlers.left(fx, outcome, before, projectId);
    return EventHandlers.touched(outcome, fx, projectId);
  }

  /** prompt_segments mirrors the winning prompt row: its segments while it is not deleted. */
  private promptChange(outcome: Outcome, fx: Effects, promptId: string, projectId: string): Outcome {
    if (outcome !== 'applied') return outcome;
    this.stmts.clearPromptSegments.run(promptId);
    const row = this.entities.prompts.current(promptId)!;
    if (row.deleted === 0) {
      for (const segmentId of JSON.parse(row.segment_ids as string) as string[]) this.stmts.putPromptSegment.run(promptId, segmentId, row.project_id);
    }
    fx.changes.project(projectId);
    return outcome;
  }

  private keyChange(outcome: Outcome, fx: Effects): Outcome {
    if (outcome === 'applied') fx.changes.keys();
    return outcome;
  }

  private catalogChange(outcome: Outcome, fx: Effects, projectId: string | null): Outcome {
    if (outcome === 'applied') {
      fx.changes.catalog();
      fx.changes.project(projectId);
    }
    return outcome;
  }

  private groupChange(outcome: Outcome, fx: Effects, groupId: string): Outcome {
    return EventHandlers.touched(outcome, fx, this.stmts.groupProject.get(groupId) as string | null);
  }
}

function strongest(a: Outcome, b: Outcome): Outcome {
  if (a === 'applied' || b === 'applied') return 'applied';
  if (a === 'stale' || b === 'stale') return 'stale';
  return 'duplicate';
}