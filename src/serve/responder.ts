import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint, ReadArgs } from '../readmodels';
import type { Access } from './access';
import type { DataVersion } from './ready-body';
import type { Builder } from './builders';
import type { BodyCache, Ready } from './cache';
import { cursorArg, cursorKey, type SigningKey } from './cursor';
import { httpError, type HttpError } from './errors';
import { pathUuid, queryArgs, queryKey } from './params';

/** A request as the responder needs it, whichever HTTP layer received it. */
export interface RequestInput {
  params: Record<string, string | undefined>;
  query: ParsedUrlQuery;
  keyHash: string | null;
}

/** A request resolved to what it reads: read-model arguments, its cache key and data_version. */
export interface Resolved {
  endpoint: Endpoint;
  args: ReadArgs;
  keyHash: string;
  cacheKey: string;
  version: DataVersion;
  /** The data_version scopes the body depends on; `version` is their sum. */
  scopes: readonly string[];
}

const notFound = (): HttpError => httpError('not_found');

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
  refresh(): number {
    return this.access.refresh();
  }

  /** Throws HttpError 401 / 400 / 404. Unknown and not-yours are the same 404, so existence does not leak. */
  resolve(endpoint: Endpoint, input: RequestInput): Resolved {
    this.access.refresh();
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
      scopes = [`project:${args.projectId}`, 'engines'];
    } else if (endpoint.scope === 'run_group') {
      args.runGroupId = scopeId = pathUuid(input.params.run_group_id, 'run_group_id');
      const projectId = this.access.groupProject(args.runGroupId);
      if (projectId === null || !this.access.canSee(accountId, projectId)) throw notFound();
      args.projectId = projectId;
      scopes = [`project:${projectId}`, 'engines'];
    }
    // After the scope check: a cursor is checked against the list of the path's project (cursor.ts).
    args.cursor = cursorArg(input.query, endpoint, args, this.signing);
    const version = this.access.versionOf(scopes);
    const cacheKey = `${endpoint.name}|${scopeId}|${queryKey(q)}|${cursorKey(input.query, endpoint)}|${version.version}`;
    return { endpoint, args, keyHash: input.keyHash!, cacheKey, version, scopes };
  }

  /** The ready body: from the cache, else built once (by the Builder: a worker thread in production). */
  respond(r: Resolved): Ready | Promise<Ready> {
    return this.cache.getOrBuild(r.endpoint.name, r.cacheKey, () => this.builder.build({ endpoint: r.endpoint, args: r.args, scopes: r.scopes }));
  }
}
