// One admission step for every transport (the Koa routes, the hot path, POST /mcp and its tool calls,
// the change feed), in one order: ready (503), key (401), the request's own parameters and scope
// (400, 404), charge (429), respond, then what the answer cost; a failure no error of the table stands
// for goes to the failure hook. Each transport only encodes the outcome: headers and an error body
// over HTTP, a tool error over MCP, a stream over the feed. docs/operations.md "Admission".
import type { Endpoint } from '../../readmodels';
import { buildTimeOf } from '../bodies/builders';
import type { Answer } from '../bodies/cache';
import type { Ready } from '../bodies/encode';
import { httpError, HttpError } from '../request/errors';
import type { Access } from './access';
import { extraCost, type RateLimiter } from './ratelimit';
import type { RequestInput, Resolved, Responder } from './responder';

export interface AdmissionOptions {
  access: Access;
  responder: Responder;
  /** The API's limiter; absent: no rate (the stdio MCP server acts for its one local user). */
  limiter?: RateLimiter;
  /** False until a read model is loaded: every request gets 503, whatever its key. */
  isReady?: () => boolean;
  /** False: a build is not charged its time, only its request (AppOptions.chargeBuildTime). */
  chargeBuildTime?: boolean;
  /** Called with a failure that became a 500 (start() marks a corrupt file on /readyz with it). */
  onFailure?: (err: unknown) => void;
}

/** Where a transport puts what admission learned: the key's account (the access line), a charge's RateLimit fields. */
export interface Outcome {
  account?(accountId: string): void;
  fields?(fields: Record<string, string>): void;
}

export class Admission {
  constructor(private readonly o: AdmissionOptions) {}

  get limiter(): RateLimiter | undefined {
    return this.o.limiter;
  }

  /** Step 1 as a question, for the hot path (which hands a request that is not ready to the Koa path). */
  isReady(): boolean {
    return this.o.isReady === undefined || this.o.isReady();
  }

  /** Step 1: ready. First, so a service that is not ready answers 503 whoever asks, a bad key included. */
  ready(): void {
    if (!this.isReady()) throw httpError('not_ready');
  }

  /** Step 2 on its own (POST /mcp as a whole, before any tool): the presented key's account, else 401. */
  key(keyHash: string | null): { keyHash: string; accountId: string } {
    const accountId = keyHash === null ? null : this.account(keyHash);
    if (keyHash === null || accountId === null) throw httpError('invalid_api_key');
    return { keyHash, accountId };
  }
  /** Step 2 as a question, for the hot path (which hands an unknown key to the path that answers its 401): the key's account or null. */
  account(keyHash: string): string | null {
    this.o.access.refresh();
    return this.o.access.account(keyHash);
  }

  /**
   * Step 3: `n` requests against the key's rate, their RateLimit fields on the answer whatever it
   * turns out to be, or the 429.
   */
  charge(keyHash: string, out: Outcome, n = 1, detail?: string): void {
    const limiter = this.o.limiter;
    if (limiter === undefined) return;
    out.fields?.(limiter.charge(keyHash, n, detail));
  }

  /**
   * Steps 1 to 3 for a read of one endpoint: ready, then resolve (key 401, parameters 400, scope
   * 404), then charge one request. A 400 or 404 of a known key counts against its rate too; a 401
   * has no key to count against (and a bucket per made-up key would be memory for anyone to fill).
   * `charge` false: the request was charged already (a tool call of a POST /mcp that paid per message).
   */
  admit(endpoint: Endpoint, input: RequestInput, out: Outcome, o: { charge?: boolean } = {}): Resolved {
    this.ready();
    const charge = o.charge ?? true;
    let resolved: Resolved;
    try {
      resolved = this.o.responder.resolve(endpoint, input);
    } catch (err) {
      const account = input.keyHash === null ? null : this.o.access.account(input.keyHash);
      if (account !== null && err instanceof HttpError) {
        out.account?.(account);
        if (charge) this.charge(input.keyHash!, out);
      }
      throw err;
    }
    out.account?.(resolved.args.accountId);
    if (charge) this.charge(resolved.keyHash, out);
    return resolved;
  }

  /** Step 4: the body, from the cache or built once for everyone waiting; and whether it had to be built. */
  async respond(resolved: Resolved, fresh = false): Promise<{ answer: Answer; built: number }> {
    const pending = this.o.responder.respond(resolved, fresh);
    const answer = await pending;
    const built = pending instanceof Promise && this.o.chargeBuildTime !== false ? buildTimeOf(answer.ready) : 0;
    return { answer, built };
  }

  /**
   * Step 5: what the answer cost beyond its request, now that it is known: the build it waited for
   * (none for a cached body) and the bytes it carries (ratelimit.ts extraCost). The RateLimit field
   * after it, or undefined when nothing more was charged.
   */
  debit(keyHash: string, built: number, bytes: number): string | undefined {
    const limiter = this.o.limiter;
    if (limiter === undefined || !limiter.on) return undefined;
    const extra = extraCost(built, bytes);
    return extra > 0 ? limiter.debit(keyHash, extra) : undefined;
  }

  /**
   * Steps 3 and 5 at once for a cached body on the hot path: one request and its bytes, or false
   * (nothing charged) when the key has not enough left, which the hot path answers 429 itself
   * (limiter.refusal). The RateLimit field ('' with the limiter off).
   */
  chargeHit(keyHash: string, ready: Ready): string | false {
    const limiter = this.o.limiter;
    if (limiter === undefined || !limiter.on) return '';
    return limiter.take(keyHash, 1, extraCost(0, ready.json.length)) ?? false;
  }

  /**
   * Step 3 as a question, for a request the hot path resolved but has no body for: true when its one
   * request would be refused (charge() would throw the 429), so the hot path answers that 429 itself
   * instead of handing a flooding key's requests to the Koa path. Nothing is charged.
   */
  overRate(keyHash: string): boolean {
    const limiter = this.o.limiter;
    return limiter !== undefined && limiter.on && limiter.short(keyHash);
  }

  /** The failure hook: an error no row of the table stands for, which the transport answers as a 500. */
  failed(err: unknown): void {
    this.o.onFailure?.(err);
  }
}
