import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint, ReadArgs } from '../../readmodels';
import type { Access } from './access';
import type { DataVersion } from '../bodies/ready-body';
import { builtAfter, type Builder } from '../bodies/builders';
import { COALESCE_MS, type Answer, type BodyCache, type Freshness, type Want } from '../bodies/cache';
import { cursorArg, type SigningKey } from '../request/cursor';
import { httpError, type HttpError } from '../request/errors';
import { inputsVersion } from '../../store';
import { pathUuid, queryArgs, requestKey } from '../request/params';

/** A request as the responder needs it, whichever HTTP layer received it. */
export interface RequestInput {
  params: Record<string, string | undefined>;
  query: ParsedUrlQuery;
  keyHash: string | null;
  /**
   * Cache-Control: no-cache: the body must be at least as new as the data committed when the
   * request arrived (what a client following the change feed sends after an event).
   */
  fresh?: boolean;
}

/** Cache-Control asks for a body as new as the data (no-cache), rather than one within the staleness bound. */
export function wantsFresh(cacheControl: string | undefined): boolean {
  return cacheControl !== undefined && /(?:^|[\s,])no-cache(?:$|[\s,=])/i.test(cacheControl);
}

/** A request resolved to what it reads: read-model arguments, its cache key and data_version. */
export interface Resolved extends Want {
  endpoint: Endpoint;
  args: ReadArgs;
  keyHash: string;
  version: DataVersion;
  /** The data_version scopes the body depends on; `version` is their sum. */
  scopes: readonly string[];
}

/** The cache's staleness rules from the serving thread's view of commits (Access) and the builder's queue. */
export function freshness(access: Access, builder: Builder, maxStalenessMs: number, coalesceMs = COALESCE_MS): Freshness {
  return {
    maxStalenessMs,
    coalesceMs: Math.min(coalesceMs, maxStalenessMs / 2),
    changedAfter: (gen) => access.changedAfter(gen),
    builtAfter,
    now: () => performance.now(),
    busy: () => builder.busy(),
  };
}

const notFound = (): HttpError => httpError('not_found');

/** The plain 404 of a project this shard does not hold: the body says nothing more than for any other. */
function misrouted(reason: string): HttpError {
  const e = notFound();
  e.reason = reason;
  return e;
}

/**
 * The framework-free core of serving: authenticate, check scope, key the cache, and build a
 * body when the cache has none. Both the Koa app and the hot path call it, so they cannot disagree.
 */
export class Responder {
  constructor(
    private readonly access: Access,
    private readonly builder: Builder,
    readonly cache: BodyCache,
    private readonly windowDays: number,
    /** What checks the cursors of requests: the key the builder signs Links with (cursor.ts). */
    private readonly signing: SigningKey,
  ) {}

  /**
   * Forgets what may be stale (see Access.refresh). The result changes whenever it did: what was
   * resolved under one generation stays right until the next.
   */
  refresh(now = false): number {
    return this.access.refresh(now);
  }

  /** Throws HttpError 401 / 400 / 404. Unknown and not-yours are the same 404, so existence does not leak. */
  resolve(endpoint: Endpoint, input: RequestInput): Resolved {
    const gen = this.access.refresh(input.fresh === true);
    const accountId = input.keyHash === null ? null : this.access.account(input.keyHash);
    if (accountId === null) throw httpError('invalid_api_key'); // with WWW-Authenticate: ApiKey (RFC 9110: a 401 names its scheme)
    const q = queryArgs(input.query, endpoint, this.windowDays);
    const args: ReadArgs = {
      ...q, accountId, windowDays: this.windowDays, projectId: '', runGroupId: '',
    };
    let scopeId = accountId;
    // Project bodies also show engine names: an engine change is a change of every project's data.
    let scopes = ['catalog'];
    if (endpoint.scope === 'project') {
      args.projectId = scopeId = pathUuid(input.params.project_id, 'project_id');
      if (!this.access.canSee(accountId, args.projectId)) throw notFound();
      this.onThisShard(args.projectId);
      scopes = [`project:${args.projectId}`, 'engines'];
    } else if (endpoint.scope === 'run_group') {
      // A project-scoped path names the group's project too: another project's group is not found there.
      const named = input.params.project_id === undefined ? null : pathUuid(input.params.project_id, 'project_id');
      args.runGroupId = scopeId = pathUuid(input.params.run_group_id, 'run_group_id');
      if (named !== null) {
        if (!this.access.canSee(accountId, named)) throw notFound();
        this.onThisShard(named); // before the group is looked up: another shard's store does not hold it
      }
      const projectId = this.access.groupProject(args.runGroupId);
      if (projectId === null || (named === null ? !this.access.canSee(accountId, projectId) : named !== projectId)) throw notFound();
      if (named === null) this.onThisShard(projectId);
      args.projectId = projectId;
      scopes = [`project:${projectId}`, 'engines'];
    }
    // After the scope check: a cursor is checked against the list of the path's project (cursor.ts).
    args.cursor = cursorArg(input.query, endpoint, args, this.signing);
    // Without the version: a key holds its newest body, and an older one may be served within the bound (cache.ts).
    const cacheKey = requestKey(endpoint, scopeId, q, input.query);
    const build = (background?: boolean) => this.builder.build({ endpoint, args, scopes }, background);
    return { endpoint, args, keyHash: input.keyHash!, account: accountId, route: endpoint.name, cacheKey, build, scopes, ...this.versions(endpoint, args.projectId, scopes, gen) };
  }

  /** A project another shard holds is not answered here: the plain 404, with the reason for the ops side. */
  private onThisShard(projectId: string): void {
    const elsewhere = this.access.elsewhere(projectId);
    if (elsewhere !== null) throw misrouted(elsewhere);
  }

  /**
   * What a request's versions are now: its data version (the sum of its scopes'), and for a project
   * or run group body the project's data-as-of and the version of what the body reads (the kinds of
   * change its endpoint depends on), all of one snapshot (Access.projectVersions).
   */
  private versions(endpoint: Endpoint, projectId: string, scopes: readonly string[], gen: number): Pick<Resolved, 'version' | 'dataVersion' | 'updatedAt' | 'asOf' | 'inputs' | 'gen' | 'catalog'> {
    if (projectId === '') {
      const version = this.access.versionOf(scopes);
      const catalog = scopes[0] === 'catalog' ? version.version : this.access.versionOf(['catalog']).version;
      return { version, dataVersion: version.version, updatedAt: version.updated_at, asOf: null, inputs: -1, gen, catalog };
    }
    const pv = this.access.projectVersions(projectId);
    const catalog = this.access.versionOf(['catalog']).version;
    return {
      version: pv, dataVersion: pv.version, updatedAt: pv.updated_at, asOf: pv.data_as_of, inputs: inputsVersion(pv, endpoint.dependsOn), gen, catalog,
    };
  }

  /**
   * Who may see what (Access.sight): a project request's resolution stays right while it holds, and
   * only its data version is read again (at) after a commit.
   */
  sight(): number {
    return this.access.sight;
  }

  /**
   * `r` in the current generation: its data versions read again. Only for project requests: a run
   * group's project is looked up again with each commit (resolve), as Access forgets it then.
   */
  at(r: Resolved, gen: number): Resolved {
    return { ...r, ...this.versions(r.endpoint, r.args.projectId, r.scopes, gen) };
  }

  /** The cached body when it may be served now (fresh, or stale within the bound), else undefined. */
  cached(r: Resolved, fresh = false): Answer | undefined {
    return this.cache.cached(r, fresh);
  }

  /** The body to send: from the cache, else built once for everyone waiting (by the Builder: a worker thread in production). */
  respond(r: Resolved, fresh = false): Answer | Promise<Answer> {
    return this.cache.get(r, fresh);
  }
}
