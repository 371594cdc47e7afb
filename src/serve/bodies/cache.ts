import { LRUCache } from 'lru-cache';
import { HttpError } from '../request/errors';
import { readySize, type Ready } from './encode';

/**
 * The same bytes (and so the same ETag) as of a newer data version: what a body whose inputs did not
 * change is, once the project moved on (a forum post leaves /visibility as it was). It says the
 * version, time and data-as-of it is current at, as a build now would; no bytes are copied.
 */
export function relabel(r: Ready, w: Want): Ready {
  const headers = w.asOf === null || r.headers['x-data-as-of'] === w.asOf ? r.headers : { ...r.headers, 'x-data-as-of': w.asOf };
  const lastModified = w.updatedAt === r.updatedAt ? r.lastModified : new Date(w.updatedAt).toUTCString();
  return { ...r, version: w.dataVersion, updatedAt: w.updatedAt, lastModified, headers };
}

/**
 * What one cache entry costs: its body (readySize) and its key, which the LRU keeps in a Map and an
 * array. Keys are ASCII (ids, dates, the cursor's base64url), one byte a character.
 */
export function entrySize(r: Ready, key: string): number {
  return readySize(r) + key.length;
}

export interface RouteStats {
  /** Requests answered from the cache, stale answers included. */
  hits: number;
  /** Answers with a body older than the data (within the staleness bound): hits, and misses that took a rebuild begun before their data (cache.ts wait). */
  stale: number;
  /**
   * Of the hits, answers with a body built before the project's last commits, none of which changed
   * what it reads (Endpoint.dependsOn): current, sent as of the new data version (relabel), no build.
   */
  kept: number;
  /** Requests that waited for a build (cold, past the bound, or Cache-Control: no-cache). */
  misses: number;
  builds: number;
  /** Of the misses, answered with the held body, stale, because the account was at its cap of builds. */
  capped: number;
}

/** What a request asks the cache for: a body of one key, at least as new as a data version. */
export interface Want {
  route: string;
  /** (route, scope, normalized query, cursor): without the data version, so a newer body replaces an older one. */
  cacheKey: string;
  /** The data_version of the body's scopes when the request was resolved. */
  dataVersion: number;
  /** Its time (Last-Modified) and the project's data-as-of then (null: none, or an account body). */
  updatedAt: string;
  asOf: string | null;
  /** The version of what the body reads then (Ready.inputs); -1 when not known: only a body of dataVersion is current. */
  inputs: number;
  /** The generation it was resolved in (Access.refresh). */
  gen: number;
  /** The account that asks: what the body's bytes are charged to in the cache (BodyCache, shares). */
  account: string;
  /**
   * The 'catalog' data_version then (projects, owners, grants). A body is never served stale across a
   * change of it: who owns or sees a project must not lag (a moved project's body names its old owner).
   */
  catalog: number;
  /** `background`: a stale-while-revalidate rebuild, whose request was answered already (Builder.build). */
  build: (background?: boolean) => Promise<Ready>;
}

/** A body to send, and whether it is older than the data (the answer then says so: send.ts). */
export interface Answer {
  ready: Ready;
  stale: boolean;
}

/** How stale a body may be served, and how that is measured (Access, the builder). */
export interface Freshness {
  /** How far behind the newest committed data a body may be served, in ms; 0: never behind. */
  maxStalenessMs: number;
  /** How far behind a stale body is before a request starts its rebuild, in ms (<= maxStalenessMs / 2; COALESCE_MS). */
  coalesceMs: number;
  /** No data committed after generation `gen` is older than this (Access.changedAfter), in now()'s ms. */
  changedAfter(gen: number): number;
  /** No data missing from `r` was committed before this, in now()'s ms (builders.ts builtAfter; -Infinity: not known). */
  builtAfter(r: Ready): number;
  now(): number;
  /** The builder's queue is past its bound: a background rebuild waits for a later request (stale bodies meanwhile). */
  busy(): boolean;
}

/** Exact bodies only (maxStalenessMs 0): what a cache without Access uses. */
export const EXACT: Freshness = { maxStalenessMs: 0, coalesceMs: 0, changedAfter: () => -Infinity, builtAfter: () => -Infinity, now: () => 0, busy: () => false };

/**
 * How far behind a stale body is before a request starts its rebuild, at most half the bound: the
 * commits of one burst (a run group's runs land in several batches over tens of ms) then share one
 * rebuild instead of one each (bench:kafka at 1,000 events/s: 255 -> 188 bodies built a second).
 */
export const COALESCE_MS = 250;

/** A cached body and the newest generation it is known to be current in. */
interface Entry {
  ready: Ready;
  gen: number;
  catalog: number;
  /** The account its bytes are charged to: the one that built it, or last read it (BodyCache). */
  owner: string;
  /** entrySize, as charged. */
  size: number;
}

/** One account's part of the cache: its bytes, and its keys from least to most recently used. */
interface Share {
  bytes: number;
  keys: Map<string, number>;
}

/** A build under way for a key: requests that need a body at least as new as dataVersion share it. */
interface Flight {
  dataVersion: number;
  promise: Promise<Ready>;
}

/**
 * The newest ready body of each key (route, scope, normalized query, cursor), with its data version.
 *
 * A request whose data_version the body has (or passed) gets it. An older body is served while it is
 * at most maxStalenessMs behind the newest committed data (stale-while-revalidate), and the first
 * such request once it is coalesceMs behind (COALESCE_MS, at most half the bound) starts one
 * rebuild in the background; the new body replaces the old one whole, so a
 * request sees one or the other. Past the bound, a cold key, or Cache-Control: no-cache, the request
 * waits for a body at least as new as the data it was resolved against, and every request waiting for
 * one key shares one build (single-flight). A body is never served newer-looking than it is: its ETag,
 * X-Data-Version and X-Data-As-Of are its own.
 */
export class BodyCache {
  readonly lru: LRUCache<string, Entry>;
  readonly routes = new Map<string, RouteStats>();
  private readonly inFlight = new Map<string, Flight>();
  private readonly shares = new Map<string, Share>();
  evictions = 0;
  /** Of the evictions, entries of an account past its share, made to give room to a body (shares). */
  shareEvictions = 0;

  constructor(readonly maxBytes: number, readonly freshness: Freshness = EXACT) {
    this.lru = new LRUCache<string, Entry>({
      maxSize: Math.max(maxBytes, 1),
      // The key counts too: it holds the request's normalised filters (engine ids, a cursor), and
      // a small body under a long key would otherwise cost memory the byte count never sees.
      sizeCalculation: (e) => e.size,
      dispose: (v, k, reason) => {
        if (reason === 'evict') this.evictions += 1;
        this.unown(v, k);
      },
    });
  }

  /** The bytes each account's entries hold (ids of accounts, never keys). */
  accountBytes(): Map<string, number> {
    return new Map([...this.shares].map(([a, s]) => [a, s.bytes]));
  }

  /** What one account may hold when the cache is full: an equal part for each account holding entries. */
  fairShare(extra = 0): number {
    return this.maxBytes / Math.max(1, this.shares.size + extra);
  }

  private own(e: Entry, key: string): void {
    let s = this.shares.get(e.owner);
    if (!s) this.shares.set(e.owner, (s = { bytes: 0, keys: new Map() }));
    s.keys.set(key, e.size);
    s.bytes += e.size;
  }

  private unown(e: Entry, key: string): void {
    const s = this.shares.get(e.owner);
    const size = s?.keys.get(key);
    if (!s || size === undefined) return;
    s.keys.delete(key);
    s.bytes -= size;
    if (s.keys.size === 0) this.shares.delete(e.owner);
  }

  /**
   * A hit: the entry is now the most recently used of its account's, and a hit by another account
   * (a shared project's body) moves its charge to that account: it is in that account's hot set now.
   */
  private touch(e: Entry, key: string, account: string): void {
    if (e.owner === account) {
      const s = this.shares.get(account);
      if (s && s.keys.delete(key)) s.keys.set(key, e.size);
      return;
    }
    this.unown(e, key);
    e.owner = account;
    this.own(e, key);
  }

  /**
   * Stores a body charged to `account`. When it does not fit, room is made first from the account's
   * own least recently used entries while it holds more than its fair share, then from the accounts
   * furthest past theirs; only what is still missing is left to the LRU's own order. So one account's
   * stream of misses evicts its own entries, not another account's hot set.
   */
  private put(key: string, ready: Ready, gen: number, catalog: number, account: string): void {
    const size = entrySize(ready, key);
    const held = this.lru.peek(key);
    let need = this.lru.calculatedSize - (held?.size ?? 0) + size - this.maxBytes;
    if (need > 0) {
      const share = this.fairShare(this.shares.has(account) ? 0 : 1);
      const mine = this.shares.get(account);
      while (need > 0 && mine && mine.bytes + size > share) {
        const freed = this.evictOldest(mine, key);
        if (freed === 0) break;
        need -= freed;
      }
      while (need > 0) {
        let worst: Share | undefined;
        for (const s of this.shares.values()) if (s.bytes > share && (!worst || s.bytes > worst.bytes)) worst = s;
        const freed = worst ? this.evictOldest(worst, key) : 0;
        if (freed === 0) break;
        need -= freed;
      }
    }
    const e: Entry = { ready, gen, catalog, owner: account, size };
    this.lru.set(key, e);
    if (this.lru.peek(key) === e) this.own(e, key);
  }

  /** Evicts the share's least recently used entry other than `keep`: the bytes freed (0: none). */
  private evictOldest(s: Share, keep: string): number {
    for (const [key, size] of s.keys) {
      if (key === keep) continue;
      this.lru.delete(key);
      this.evictions += 1;
      this.shareEvictions += 1;
      return size;
    }
    return 0;
  }

  stats(route: string): RouteStats {
    let s = this.routes.get(route);
    if (!s) this.routes.set(route, (s = { hits: 0, stale: 0, kept: 0, misses: 0, builds: 0, capped: 0 }));
    return s;
  }

  /**
   * The cached body when it may be served now, counted as a hit; undefined (nothing counted) when the
   * request must wait. A stale body within the bound and coalesceMs behind starts the key's rebuild unless one is under way
   * (or the builder is past its bound: a later request starts it). `fresh`: only a body at least as
   * new as w.dataVersion (Cache-Control: no-cache).
   */
  cached(w: Want, fresh = false): Answer | undefined {
    const e = this.lru.get(w.cacheKey);
    if (!e) return undefined;
    const s = this.stats(w.route);
    if (e.ready.version >= w.dataVersion) {
      this.touch(e, w.cacheKey, w.account);
      // Still current in this generation: its staleness counts from later. A catalog change that
      // changed this body (a project's owner, name) bumped its own scopes too, so it is current for that.
      if (w.gen > e.gen) e.gen = w.gen;
      if (w.catalog > e.catalog) e.catalog = w.catalog;
      s.hits += 1;
      return { ready: e.ready, stale: false };
    }
    if (w.inputs >= 0 && e.ready.inputs === w.inputs) {
      // The project moved on by commits of other kinds than the body reads: it is current, as of now's
      // version (exact whatever the bound: the bytes a build would make). Kept under the new label,
      // so the next requests are plain hits; set anew, so the cache counts the label's bytes.
      const ready = relabel(e.ready, w);
      this.put(w.cacheKey, ready, Math.max(w.gen, e.gen), Math.max(w.catalog, e.catalog), w.account);
      s.hits += 1;
      s.kept += 1;
      return { ready, stale: false };
    }
    const f = this.freshness;
    const behind = this.behind(e);
    if (fresh || f.maxStalenessMs <= 0 || e.catalog !== w.catalog || behind > f.maxStalenessMs) return undefined;
    this.touch(e, w.cacheKey, w.account);
    s.hits += 1;
    s.stale += 1;
    if (behind >= f.coalesceMs && !this.inFlight.has(w.cacheKey) && !f.busy()) this.start(w, true).promise.catch(() => {}); // its failure is the next request's
    return { ready: e.ready, stale: true };
  }

  /**
   * How far behind the data an entry may be, in ms: since the first commit it lacks, of which two
   * lower bounds are known: the end of the generation it was last known current in, and the moment
   * its build was handed to a thread (its snapshot began later). The later of the two is the closer.
   */
  private behind(e: Entry): number {
    const f = this.freshness;
    return f.now() - Math.max(f.changedAfter(e.gen), f.builtAfter(e.ready));
  }

  /** The cached body when it may be served (cached), else the shared build of one at least as new as w.dataVersion. */
  get(w: Want, fresh = false): Answer | Promise<Answer> {
    const hit = this.cached(w, fresh);
    if (hit) return hit;
    this.stats(w.route).misses += 1;
    return this.wait(w, fresh);
  }

  /**
   * A build under way may have begun before w's data was committed (a background rebuild): its body
   * is taken when it turned out new enough, else one more build, shared in turn. A build begun for
   * w.dataVersion or later reads a snapshot at least that new (ready-body.ts), so this ends.
   */
  private async wait(w: Want, fresh: boolean): Promise<Answer> {
    for (;;) {
      const f = this.inFlight.get(w.cacheKey) ?? this.start(w);
      let ready: Ready;
      try {
        ready = await f.promise;
      } catch (e) {
        const held = this.overCap(e, w, fresh);
        if (held) return held;
        throw e;
      }
      if (ready.version >= w.dataVersion || f.dataVersion >= w.dataVersion) return { ready, stale: false };
      // The build it waited for began before w's data was committed (a rebuild started by an earlier
      // request). Its body is what the cache now holds: when that is within the bound, it is served
      // (stale, saying so) as any cached body within the bound is, rather than waiting for one more
      // build. Under a stream of commits every build ends behind the data, so otherwise a request
      // past the bound would wait for two builds.
      const within = this.withinBound(w, ready, fresh);
      if (within) return within;
    }
  }

  /** `ready` as a stale answer to w when the cache holds it as the key's body and it may be served (cached's rules). */
  private withinBound(w: Want, ready: Ready, fresh: boolean): Answer | undefined {
    const e = this.lru.peek(w.cacheKey);
    const f = this.freshness;
    if (fresh || f.maxStalenessMs <= 0 || !e || e.ready !== ready || e.catalog !== w.catalog || this.behind(e) > f.maxStalenessMs) return undefined;
    this.touch(e, w.cacheKey, w.account);
    this.stats(w.route).stale += 1;
    return { ready, stale: true };
  }

  /**
   * The account that asked is at its cap of builds (builders.ts): the body the cache holds, however
   * far behind, rather than a 429 (marked stale, as every stale answer is). Not across a change of
   * who owns or sees what (catalog), and not when the request asked for a body as new as the data.
   */
  private overCap(e: unknown, w: Want, fresh: boolean): Answer | undefined {
    if (fresh || !(e instanceof HttpError) || e.code !== 'rate_limited') return undefined;
    const held = this.lru.get(w.cacheKey);
    if (!held || held.catalog !== w.catalog) return undefined;
    const s = this.stats(w.route);
    s.capped += 1;
    return { ready: held.ready, stale: true };
  }

  /** Builds w's body; it replaces the key's body unless that is newer (a build that began earlier can end later). */
  private start(w: Want, background = false): Flight {
    const s = this.stats(w.route);
    const flight: Flight = {
      dataVersion: w.dataVersion,
      promise: w.build(background).then((ready) => {
        s.builds += 1;
        const held = this.lru.peek(w.cacheKey);
        if (this.maxBytes > 0 && (!held || ready.version >= held.ready.version)) {
          this.put(w.cacheKey, ready, Math.max(w.gen, held?.gen ?? 0), Math.max(w.catalog, held?.catalog ?? 0), w.account);
        }
        return ready;
      }).finally(() => {
        if (this.inFlight.get(w.cacheKey) === flight) this.inFlight.delete(w.cacheKey);
      }),
    };
    this.inFlight.set(w.cacheKey, flight);
    return flight;
  }
}
