// Pages of the long lists: keyset pages for time-ordered lists, snapshot pages for ranked ones.
import { LRUCache } from 'lru-cache';
import type { PagePosition, ReadArgs, SortKey } from './args';
import { PARAMS, type QueryArgs, type QueryParamName } from './params.gen';
import type { ReadStore } from './store';

/** One page of a list and where the next one starts; next is null on the last page. */
export interface Page<T> {
  items: T[];
  next: PagePosition | null;
}

/**
 * What a paged build knows besides its arguments: the data version of the read transaction it runs
 * in, and the ordered lists of walks in progress, kept across requests by whoever builds (one
 * PageSnapshots per build thread, or per inline builder): the read models keep no state of their own.
 */
export interface PageContext {
  version: number;
  snapshots: PageSnapshots;
}

/** The items of a page: `limit` of them (0: all) from `offset`. */
function pageSlice<T>(list: readonly T[], offset: number, limit: number): T[] {
  return limit > 0 ? list.slice(offset, offset + limit) : list.slice(offset);
}

/**
 * A time-ordered page read with limit + 1 rows: the extra row only says that a next page exists.
 * The next page starts after the last item's sort key, so items that arrive meanwhile (newer, hence
 * before the cursor) never shift it: a walk sees every item that existed when it began exactly once.
 */
export function keysetPage<T>(rows: T[], limit: number, keyOf: (item: T) => SortKey): Page<T> {
  if (limit <= 0 || rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: { after: keyOf(items[items.length - 1]!) } };
}

/** Rows to fetch for a keyset page: one more than the page, or all (-1 is SQLite's "no limit"). */
export function fetchCount(limit: number): number {
  return limit > 0 ? limit + 1 : -1;
}

/**
 * A list ordered by something events change (a count, a relevance), so a position in it moves: a keyset
 * cursor would skip items that rise past it and repeat items that fall behind it. A walk instead pages
 * through one ordered list, the one of the data version its first page was built from: that list is
 * kept (SNAPSHOT_MAX_BYTES per building thread, least recently used first out) and the cursor names its
 * version and offset. Page 2 onwards come from it, so every item of the first page's list appears exactly
 * once whatever arrives meanwhile. When it is gone (evicted, a restart, another build thread or replica):
 * - the data version has not moved: the list is built again, the same list, and the walk stays exact;
 * - it has: the walk continues after the last item's sort key in the current list, pinning that list
 *   from then on. Items whose rank crossed the cursor in between can then be missed or repeated.
 */
export interface Ranked<T> {
  /** The whole list, in order. */
  all(store: ReadStore, args: ReadArgs): T[];
  keyOf(item: T): SortKey;
  /** Order of two sort keys as the list is ordered (negative: a comes first). */
  compare(a: SortKey, b: SortKey): number;
}

/**
 * Ordered lists of walks in progress, per owner (PageSnapshots); bounded by their bytes. A list is kept as each
 * item's JSON text, not as the items: objects take several times their JSON's bytes of heap, and
 * under a live stream every commit makes a new version of every ranked list, so the cap fills.
 * Texts are what the cap counts.
 */
export const SNAPSHOT_MAX_BYTES = 32 * 1024 * 1024;
/** V8's cost of a string beside its characters (header, and the array slot that holds it), about. */
const STRING_OVERHEAD_BYTES = 32;

/**
 * The ordered lists of walks in progress (see Ranked), as their owner keeps them across requests:
 * a walk's next page finds its list when it is built by the same owner (the builders send a project's
 * paged jobs to the same thread), else the list is built again or the walk goes on after its last key.
 */
export class PageSnapshots {
  private readonly lists: LRUCache<string, { texts: readonly string[]; bytes: number }>;

  constructor(maxBytes = SNAPSHOT_MAX_BYTES) {
    this.lists = new LRUCache({ maxSize: maxBytes, sizeCalculation: (s) => Math.max(1, s.bytes) });
  }

  /** How many ordered lists are kept (tests; /cache-style introspection). */
  get size(): number {
    return this.lists.size;
  }

  /** Forgets every kept list, as a restart or an eviction would. */
  clear(): void {
    this.lists.clear();
  }

  /** The kept list of `key`'s walk, as each item's JSON text. */
  get(key: string): readonly string[] | undefined {
    return this.lists.get(key)?.texts;
  }

  /** Keeps `list` for the walk of `key`, unless it is kept already (a list is kept once). */
  keep(key: string, list: readonly unknown[]): void {
    if (!this.lists.has(key)) this.lists.set(key, kept(list));
  }
}

/** A list as kept: each item's JSON text (JSON.parse of it gives the item's bytes back exactly). */
function kept(list: readonly unknown[]): { texts: string[]; bytes: number } {
  const texts = list.map((item) => JSON.stringify(item));
  let bytes = 0;
  for (const t of texts) bytes += t.length + STRING_OVERHEAD_BYTES;
  return { texts, bytes };
}

/** A paged endpoint as its list's identity needs it: its name and its query parameters (Endpoint). */
export interface ListOf {
  name: string;
  params: readonly QueryParamName[];
}

/** Bound by every list since v1, given or not ('*'): their place is kept so that cursors issued then stay valid. */
const V1_BOUND: ReadonlyArray<keyof QueryArgs> = ['engineIds', 'entityType'];

/**
 * The arguments that joined the paged lists after v1, one group per release that added some. A group
 * holds its place in a list's identity only when one of its arguments, or of a later group's, is
 * given: a walk asked as an earlier release could ask it keeps that release's identity, so the
 * cursors that release issued stay valid. Arguments of no group here form a last group of their own.
 */
const JOINED: ReadonlyArray<ReadonlyArray<keyof QueryArgs>> = [
  ['startDate', 'endDate'], // v1.1: date ranges
  ['country', 'persona', 'model', 'segmentIds'], // the dimension filters
];

/**
 * A value as an identity spells it: as it is, unless it holds what separates values (a comma),
 * arguments (a newline) or escapes (a backslash), or is exactly what an absent argument is (`*`):
 * those are escaped. So the spelling is unambiguous (persona=a&persona=b is `a,b`, the one label
 * `a,b` is `a\,b`: test/serve/request-keys.test.ts) and plain values are spelled as before, so the
 * cursors issued before stay valid.
 */
function item(v: string): string {
  const escaped = /[\\,\n]/.test(v) ? v.replace(/[\\,\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`)) : v;
  return escaped === '*' ? '\\*' : escaped;
}

const spelled = (v: QueryArgs[keyof QueryArgs]): string => (v === null ? '*' : Array.isArray(v) ? v.map((x) => item(String(x))).join(',') : item(String(v)));

/**
 * Which list a walk pages: the endpoint, the project and every query argument the endpoint lists but
 * the page size (limit: it may change mid-walk). Snapshots are kept per list, and a cursor is bound
 * to one (serve/request/cursor.ts). The v1 filters always hold their place; a later group (JOINED) joins
 * when one of its arguments or of a later group's is given, so the lists of earlier releases keep
 * the identity they had.
 */
export function listIdentity(list: ListOf, args: Pick<ReadArgs, 'projectId'> & QueryArgs): string {
  const later = list.params.map((n) => PARAMS[n]).filter((p) => p['x-page-size'] !== true)
    .map((p) => p.arg).filter((a): a is keyof QueryArgs => a !== null && !V1_BOUND.includes(a));
  const groups = [...JOINED.map((g) => later.filter((a) => g.includes(a))), later.filter((a) => !JOINED.some((g) => g.includes(a)))];
  const last = groups.findLastIndex((g) => g.some((a) => args[a] !== null));
  const rest = groups.slice(0, last + 1).flat().map((a) => spelled(args[a]));
  return [list.name, args.projectId, ...V1_BOUND.map((a) => spelled(args[a])), ...rest].join('\n');
}

function snapshotKey(of: ListOf, args: ReadArgs, version: number): string {
  return `${listIdentity(of, args)}\n${version}`;
}

/** The page of `list` at `offset`; a walk that goes on keeps the list (once) for its next pages. */
function rankedSlice<T>(r: Ranked<T>, of: ListOf, args: ReadArgs, ctx: PageContext, list: readonly T[], version: number, offset: number): Page<T> {
  const page = pageAt(r, pageSlice(list, offset, args.limit), offset, list.length, version);
  if (page.next) ctx.snapshots.keep(snapshotKey(of, args, version), list);
  return page;
}

/** The page of a kept list at `offset`. */
function keptSlice<T>(r: Ranked<T>, texts: readonly string[], version: number, offset: number, limit: number): Page<T> {
  return pageAt(r, pageSlice(texts, offset, limit).map((t) => JSON.parse(t) as T), offset, texts.length, version);
}

/** `items`, taken at `offset` of a list `total` long, as a page: the next starts after them, if any is left. */
function pageAt<T>(r: Ranked<T>, items: T[], offset: number, total: number, version: number): Page<T> {
  const end = offset + items.length;
  if (items.length === 0 || end >= total) return { items, next: null };
  return { items, next: { after: r.keyOf(items[items.length - 1]!), pinned: { version, offset: end } } };
}

/** The page of a ranked list `args.cursor` names; `of`: the endpoint it is the list of. */
export function rankedPage<T>(r: Ranked<T>, of: ListOf, store: ReadStore, args: ReadArgs, ctx: PageContext): Page<T> {
  const c = args.cursor;
  if (!c) return rankedSlice(r, of, args, ctx, r.all(store, args), ctx.version, 0);
  if (c.pinned) {
    const held = ctx.snapshots.get(snapshotKey(of, args, c.pinned.version));
    if (held) return keptSlice(r, held, c.pinned.version, c.pinned.offset, args.limit);
    // Same version, same data: built again, the list is the one the walk began with.
    if (c.pinned.version === ctx.version) return rankedSlice(r, of, args, ctx, r.all(store, args), ctx.version, c.pinned.offset);
  }
  // The walk's list is gone and the data moved: go on after the last item seen, in today's order.
  const list = r.all(store, args);
  let start = list.findIndex((item) => r.compare(r.keyOf(item), c.after) > 0);
  if (start < 0) start = list.length;
  return rankedSlice(r, of, args, ctx, list, ctx.version, start);
}
