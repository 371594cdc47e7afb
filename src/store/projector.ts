import type { EventDataByType, EventType } from '../events';
import { isStorageError, type Db } from './db';
import { Aggregator, RECOUNT_MS_PER_BATCH } from './aggregates';
import { entityTables, ForumStore, PairTable, SplitFactTable, type EntityTables } from './facts';
import { EntityTable } from './entities';
import { RunStore, type PrecomputedRun, type RunFacts } from './run-store';
import { noteCommit } from './commits';
import { precomputeEvent, rawBytes, type AcceptedEvent, type PrecomputedEvent, type SourceEvent } from './precompute';
import { ChangeSet, type Outcome, type Version } from './versions';
import { ChangeLogWriter, changeKindOf } from './change-log';
import { TrendDays } from './trend-days';

export type { SourceEvent } from './precompute';

/**
 * How a writer applies a batch. 'bulk' (a replay, a Kafka catch-up): a project whose counting changed
 * is counted again in the batch of the change (aggregates.ts), and the trend's days a batch leaves
 * stale wait for settle() instead of being rendered after each batch: a day-ordered log left each
 * project's day stale in every batch, and rendered it ~4 times. Readers compute a project's trend
 * while any of its days is stale (trend-days.ts), so nothing is served wrong meanwhile, only built
 * slower. 'live': each batch leaves nothing stale behind it. Given with each batch, so no writer's
 * mode leaks into another's.
 */
export type ApplyMode = 'live' | 'bulk';

export interface BatchResult {
  applied: number;
  duplicate: number;
  stale: number;
  deadLettered: number;
  /** Scopes whose data_version was bumped ('project:<id>', 'catalog', 'keys'). */
  changed: string[];
}

/** An event the last batch set aside: where it came from and why (a replay names them to its user). */
export interface DeadLetterNote { source: string; position: number; reason: string; detail: string; eventId: string | null }

/** What one event's handler touched, merged into the batch only when the event succeeds. */
interface Effects {
  changes: ChangeSet;
  /** Runs whose contribution joins the aggregates, and runs (old versions) whose contribution leaves. */
  added: RunFacts[];
  removed: RunFacts[];
}

type Handler<T extends EventType> = (data: EventDataByType[T], v: Version, fx: Effects) => Outcome;
/** Prompt runs arrive precomputed (see precompute.ts) and are applied by applyRun, not a handler. */
type Handlers = { [T in Exclude<EventType, 'prompt_run.completed'>]: Handler<T> };

const json = (v: unknown): string => JSON.stringify(v);
const bool = (b: boolean): number => (b ? 1 : 0);

/**
 * The projector: validated events -> facts, derived rows and aggregates, one SQLite transaction per
 * batch, together with the source positions of the batch and the data_version bumps it causes.
 */
export class Projector {
  private readonly entities: EntityTables;
  private readonly access: PairTable;
  private readonly tracking: PairTable;
  private readonly keys: SplitFactTable;
  private readonly webhooks: EntityTable;
  private readonly groups: SplitFactTable;
  private readonly forum: ForumStore;
  private readonly runs: RunStore;
  private readonly aggregator: Aggregator;
  private readonly changeLog: ChangeLogWriter;
  private readonly trendDays: TrendDays;
  private readonly handlers: Handlers;
  private readonly stmts;
  private readonly applyInTx;
  private readonly settleInTx;
  private readonly renderInTx;
  private readonly eventInSavepoint;
  private dataVersion: unknown = null;
  /** The events the last batch applied set aside (its `deadLettered`), in order. */
  readonly deadLetters: DeadLetterNote[] = [];
  /** One event's effects, emptied before each event (one object per batch, not three per event). */
  private readonly effects: Effects = { changes: new ChangeSet(), added: [], removed: [] };

  constructor(private readonly db: Db) {
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
    this.runs = new RunStore(db);
    this.aggregator = new Aggregator(db, this.runs);
    this.changeLog = new ChangeLogWriter(db);
    this.trendDays = new TrendDays(db);
    this.handlers = this.makeHandlers();
    this.stmts = {
      position: db.prepare(`INSERT INTO source_positions (source, position) VALUES (?, ?)
        ON CONFLICT (source) DO UPDATE SET position = max(position, excluded.position)`),
      deadLetter: db.prepare(`INSERT OR IGNORE INTO dead_letters (source, position, reason, detail, event_id, type, raw, received_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      bump: db.prepare(`INSERT INTO data_versions (scope, version, updated_at) VALUES (?, 1, ?)
        ON CONFLICT (scope) DO UPDATE SET version = version + 1, updated_at = excluded.updated_at`),
      groupProject: db.prepare('SELECT project_id FROM run_groups WHERE id = ?').pluck(),
      clearPromptSegments: db.prepare('DELETE FROM prompt_segments WHERE prompt_id = ?'),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      putPromptSegment: db.prepare('INSERT INTO prompt_segments (prompt_id, segment_id, project_id) VALUES (?, ?, ?)'),
    };
    // IMMEDIATE: the write lock is taken (or waited for) at BEGIN, so what the batch reads is what it writes over.
    this.applyInTx = db.transaction((events: PrecomputedEvent[], isolate: boolean, mode: ApplyMode) => this.applyAll(events, isolate, mode)).immediate;
    this.settleInTx = db.transaction(() => {
      this.begin();
      this.aggregator.settle();
      this.runs.index.flush();
      return this.trendDays.render();
    }).immediate;
    this.renderInTx = db.transaction(() => this.trendDays.render()).immediate;
    // A nested better-sqlite3 transaction is a SAVEPOINT: a handler that throws undoes only its own event.
    this.eventInSavepoint = db.transaction((e: AcceptedEvent, fx: Effects) => this.dispatch(e, fx));
  }

  /**
   * Applies a batch atomically: facts, aggregates, dead letters, positions and versions commit together.
   * Handlers should not throw; if one does (a bug, or data the schemas let through that SQLite
   * refuses), the batch is re-run with a savepoint per event so only the failing event is
   * dead-lettered. Savepoints are not free, so the fast path does without them.
   */
  applyBatch(events: SourceEvent[], mode: ApplyMode = 'live'): BatchResult {
    return this.applyPrecomputed(events.map((e) => precomputeEvent(e)), mode);
  }

  /**
   * applyBatch for events already decoded and precomputed (by precomputeEvent, in this thread or another).
   * The week and month roll-ups of each project's latest period wait in memory (store/rollups.ts):
   * a writer calls settle() when it ends.
   */
  applyPrecomputed(events: PrecomputedEvent[], mode: ApplyMode = 'live'): BatchResult {
    try {
      return this.applyInTx(events, false, mode);
    } catch (err) {
      this.fail();
      if (isStorageError(err)) throw err; // the disk, not an event: nothing to isolate
      try {
        return this.applyInTx(events, true, mode);
      } catch (again) {
        this.fail();
        throw again;
      }
    } finally {
      noteCommit();
    }
  }

  /**
   * The roll-ups waiting in memory or marked pending written, in one transaction (nothing pending:
   * nothing written); then every stale day of the trend rendered (a replay or a catch-up deferred
   * them), RENDER_LIMIT a transaction: a stop that ends this meanwhile leaves the rest stale, read as
   * computed until a writer renders them.
   */
  settle(): void {
    try {
      if (this.settleInTx() > 0) while (this.renderInTx() > 0);
    } catch (err) {
      this.fail();
      throw err;
    } finally {
      noteCommit();
    }
  }

  /**
   * A write transaction starts. Another connection's commit since this writer's last one shows as a
   * new PRAGMA data_version (a connection's own commits leave it): what this writer keeps in memory
   * (roll-ups waiting, runs not indexed yet) may then lack what the other wrote.
   */
  private begin(): void {
    const version = this.stmts.dataVersion.get();
    const othersWrote = this.dataVersion !== null && version !== this.dataVersion;
    this.dataVersion = version;
    this.runs.index.begin(othersWrote);
    this.aggregator.begin(othersWrote);
  }

  /** A transaction failed: nothing it wrote stands, so what memory learned from it is forgotten. */
  private fail(): void {
    this.runs.fail();
    this.aggregator.fail();
  }

  private applyAll(events: PrecomputedEvent[], isolate: boolean, mode: ApplyMode): BatchResult {
    const result: BatchResult = { applied: 0, duplicate: 0, stale: 0, deadLettered: 0, changed: [] };
    this.deadLetters.length = 0; // an isolating second pass notes them again
    const changes = new ChangeSet();
    const positions = new Map<string, number>();
    const now = new Date().toISOString();
    this.begin();
    let source = '';
    let next = 0;
    for (const e of events) {
      if (e.source !== source) {
        if (source !== '') positions.set(source, Math.max(positions.get(source) ?? 0, next));
        source = e.source;
        next = positions.get(source) ?? 0;
      }
      if (e.position + 1 > next) next = e.position + 1;
      if (e.ok && e.run && !isolate) {
        // A prompt run (nearly every event): applied straight, its effects noted without an event's own change set.
        result[this.applyRunStraight(e.run, e.version, changes)] += 1;
        continue;
      }
      if (!e.ok) {
        this.deadLetter(e, e.reason, e.detail, e.eventId, e.type, now);
        result.deadLettered += 1;
        continue;
      }
      const fx = this.effects;
      fx.changes.clear();
      fx.added.length = 0;
      fx.removed.length = 0;
      let outcome: Outcome;
      try {
        outcome = isolate ? this.eventInSavepoint(e, fx) : this.dispatch(e, fx);
      } catch (err) {
        // After SQLITE_FULL/IOERR SQLite may have rolled the whole transaction back: what ran next
        // would commit piecemeal. A storage failure fails the batch; only an event's own error is isolated.
        if (!isolate || isStorageError(err) || !this.db.inTransaction) throw err;
        this.runs.rolledBack();
        this.deadLetter(e, 'projection_failed', (err as Error).message, e.version.id, e.type, now);
        result.deadLettered += 1;
        continue;
      }
      result[outcome] += 1;
      changes.absorb(fx.changes, changeKindOf(e.type), e.version.at);
      for (const r of fx.removed) {
        this.aggregator.remove(r);
        changes.noteRun(r.project_id, r.completed_at, e.version.at);
      }
      for (const r of fx.added) {
        this.aggregator.add(r);
        changes.noteRun(r.project_id, r.completed_at, e.version.at);
      }
    }
    if (source !== '') positions.set(source, Math.max(positions.get(source) ?? 0, next));
    // A bulk writer (a replay, a catch-up) counts a project whose counting changed again at once; a
    // live one lists it and counts a slice of it a batch (this one's included), a bounded time.
    const live = mode === 'live';
    this.aggregator.flush(live);
    this.aggregator.recountStep(RECOUNT_MS_PER_BATCH);
    this.runs.index.finish();
    // After every row of the batch, engines included: the days it left stale, rendered again.
    if (live) this.trendDays.render();
    result.changed = changes.scopes();
    // Project scopes are bumped by the change log, with their data-as-of, after engines (see change-log.ts).
    for (const scope of result.changed) if (changes.shared.has(scope)) this.stmts.bump.run(scope, now);
    this.changeLog.record(changes, now);
    for (const [source, next] of positions) this.stmts.position.run(source, next);
    return result;
  }

  private deadLetter(e: PrecomputedEvent, reason: string, detail: string, eventId: string | null, type: string | null, now: string): void {
    this.deadLetters.push({ source: e.source, position: e.position, reason, detail, eventId });
    this.stmts.deadLetter.run(e.source, e.position, reason, detail, eventId, type, rawBytes(e.raw), now);
  }

  private dispatch(e: AcceptedEvent, fx: Effects): Outcome {
    if (e.run) return this.applyRun(e.run, e.version, fx);
    const handler = this.handlers[e.type as keyof Handlers] as Handler<EventType>;
    return handler(e.data as EventDataByType[EventType], e.version, fx);
  }

  /** applyRun without Effects: what it added or removed goes to the aggregator and the batch's changes directly. */
  private applyRunStraight(run: PrecomputedRun, v: Version, changes: ChangeSet): Outcome {
    const r = this.runs.apply(run, v);
    if (r.removed) {
      this.aggregator.remove(r.removed);
      changes.noteRun(r.removed.project_id, r.removed.completed_at, v.at);
    }
    if (r.added) {
      this.aggregator.add(r.added);
      changes.noteRun(r.added.project_id, r.added.completed_at, v.at);
    }
    return r.outcome;
  }

  private applyRun(run: PrecomputedRun, v: Version, fx: Effects): Outcome {
    const r = this.runs.apply(run, v);
    if (r.removed) {
      fx.removed.push(r.removed);
      fx.changes.project(r.removed.project_id);
    }
    if (r.added) {
      fx.added.push(r.added);
      fx.changes.project(r.added.project_id);
    }
    return r.outcome;
  }

  /** Marks the project changed when the outcome says data changed. */
  private static touched(outcome: Outcome, fx: Effects, projectId: string | null | undefined): Outcome {
    if (outcome === 'applied') fx.changes.project(projectId);
    return outcome;
  }

  private makeHandlers(): Handlers {
    const t = this.entities;
    const touched = Projector.touched;
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
      'term.upserted': (d, v, fx) => Projector.moving(t.terms, d.id, d.project_id, fx, () => t.terms.upsert(d.id, v, { project_id: d.project_id, value: d.value, kind: d.kind })),
      'term.deleted': (d, v, fx) => Projector.moving(t.terms, d.id, d.project_id, fx, () => t.terms.remove(d.id, v, { project_id: d.project_id })),
      'segment.upserted': (d, v, fx) => Projector.moving(t.segments, d.id, d.project_id, fx, () => t.segments.upsert(d.id, v, {
        project_id: d.project_id, name: d.name, description: d.description ?? null, active: bool(d.active),
      })),
      'segment.deleted': (d, v, fx) => Projector.moving(t.segments, d.id, d.project_id, fx, () => t.segments.remove(d.id, v, { project_id: d.project_id })),
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
        Projector.left(fx, outcome, before, d.project_id);
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
        Projector.left(fx, a, before, d.project_id);
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
    Projector.left(fx, outcome, before?.project_id, after.project_id);
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
    Projector.left(fx, outcome, before, projectId);
    return Projector.touched(outcome, fx, projectId);
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
    return Projector.touched(outcome, fx, this.stmts.groupProject.get(groupId) as string | null);
  }
}

function strongest(a: Outcome, b: Outcome): Outcome {
  if (a === 'applied' || b === 'applied') return 'applied';
  if (a === 'stale' || b === 'stale') return 'stale';
  return 'duplicate';
}
