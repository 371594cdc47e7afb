import type { EventDataByType, EventType } from '../events';
import { isStorageError, type Db } from './db';
import { Aggregator, RECOUNT_MS_PER_BATCH } from './aggregates';
import { EventHandlers, type AnyHandler, type Effects, type Handlers } from './event-handlers';
import { RunStore, type PrecomputedRun } from './run-store';
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

/**
 * The projector: validated events -> facts, derived rows and aggregates, one SQLite transaction per
 * batch, together with the source positions of the batch and the data_version bumps it causes.
 */
export class Projector {
  private readonly runs: RunStore;
  private readonly aggregator: Aggregator;
  private readonly changeLog: ChangeLogWriter;
  private readonly trendDays: TrendDays;
  private readonly handlers: EventHandlers;
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
    this.runs = new RunStore(db);
    this.aggregator = new Aggregator(db, this.runs);
    this.changeLog = new ChangeLogWriter(db);
    this.trendDays = new TrendDays(db);
    this.handlers = new EventHandlers(db, this.aggregator);
    this.stmts = {
      position: db.prepare(`INSERT INTO source_positions (source, position) VALUES (?, ?)
        ON CONFLICT (source) DO UPDATE SET position = max(position, excluded.position)`),
      deadLetter: db.prepare(`INSERT OR IGNORE INTO dead_letters (source, position, reason, detail, event_id, type, raw, received_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      bump: db.prepare(`INSERT INTO data_versions (scope, version, updated_at) VALUES (?, 1, ?)
        ON CONFLICT (scope) DO UPDATE SET version = version + 1, updated_at = excluded.updated_at`),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
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
    const handler = this.handlers.byType[e.type as keyof Handlers] as AnyHandler;
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
}
