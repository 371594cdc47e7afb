import type { ParsedUrlQuery } from 'node:querystring';
import type { Endpoint, ReadArgs, ReadStore } from '../readmodels';
import type { Access, DataVersion } from './access';
import type { BodySchemas } from './bodies';
import { prepare, type BodyCache, type Ready } from './cache';
import { HttpError } from './errors';
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
}

const notFound = (): HttpError => new HttpError(404, 'Not found');

/**
 * The framework-free core of serving: authenticate, check scope, key the cache, and build a
 * body when the cache has none. Both the Koa app and the hot path call it, so they cannot disagree.
 */
export class Responder {
  constructor(
    private readonly store: ReadStore,
    private readonly access: Access,
    private readonly schemas: BodySchemas,
    readonly cache: BodyCache,
    private readonly windowDays: number,
  ) {}

  /** Throws HttpError 401 / 400 / 404. Unknown and not-yours are the same 404, so existence does not leak. */
  resolve(endpoint: Endpoint, input: RequestInput): Resolved {
    this.access.refresh();
    const accountId = input.keyHash === null ? null : this.access.account(input.keyHash);
    if (accountId === null) throw new HttpError(401, 'Invalid API key');
    const q = queryArgs(input.query, endpoint.query);
    const args: ReadArgs = {
      engineIds: q.engineIds, limit: q.limit, entityType: q.entityType, accountId, windowDays: this.windowDays, projectId: '', runGroupId: '',
    };
    let scopeId = accountId;
    let versionScope = 'catalog';
    if (endpoint.scope === 'project') {
      args.projectId = scopeId = pathUuid(input.params.project_id, 'project_id');
      if (!this.access.canSee(accountId, args.projectId)) throw notFound();
      versionScope = `project:${args.projectId}`;
    } else if (endpoint.scope === 'run_group') {
      args.runGroupId = scopeId = pathUuid(input.params.run_group_id, 'run_group_id');
      const projectId = this.access.groupProject(args.runGroupId);
      if (projectId === null || !this.access.canSee(accountId, projectId)) throw notFound();
      args.projectId = projectId;
      versionScope = `project:${projectId}`;
    }
    // Project bodies also show engine names: an engine change is a change of every project's data.
    const version = versionScope === 'catalog' ? this.access.version(versionScope) : this.access.combined(versionScope, 'engines');
    const cacheKey = `${endpoint.name}|${scopeId}|${queryKey(q)}|${version.version}`;
    return { endpoint, args, keyHash: input.keyHash!, cacheKey, version };
  }

  respond(r: Resolved): Ready {
    return this.cache.getOrBuild(r.endpoint.name, r.cacheKey, () => this.build(r));
  }

  /** Builds, validates and serializes a body once. A body that fails its schema is a bug: 500, never served. */
  private build(r: Resolved): Ready {
    const body = r.endpoint.build(this.store, r.args);
    const problem = this.schemas.check(r.endpoint.schema, body);
    if (problem) throw new Error(`${r.endpoint.name} body fails schemas/api/${r.endpoint.schema}.json: ${problem}`);
    return prepare(body, r.version.version, r.version.updated_at);
  }
}
