// Format validators for the schemas, with the accept/reject set of the ones they replace but a
// fraction of their cost: decoding is the CPU floor of replay, and ajv-formats' regexes ('uri' is
// an RFC 3986 regex with IPv6 alternatives) cost ~25 % of a decode. Each fast path accepts only
// strings it has proved the original accepts; anything else goes to ajv-formats' own validator,
// so an uncommon shape costs what it did before and gets the same answer.
// test/events/decode-fast.test.ts holds them to the originals.
import type { FormatDefinition } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats';

type StringFormat = FormatDefinition<string>;

/**
 * ajv-formats' validator and compare for a name, from its 'full' set (the one
 * `addFormats(ajv, [names])` registers): a plain function ('uri') or a { validate, compare } object.
 */
function original(name: 'date' | 'date-time' | 'uri'): { validate: (s: string) => boolean; compare?: FormatDefinition<string>['compare'] } {
  const f = fullFormats[name];
  if (typeof f === 'function') return { validate: f };
  if (typeof f === 'object' && !(f instanceof RegExp) && typeof f.validate === 'function') {
    // A string format: its validate takes strings (ajv's union also admits number formats).
    const def = f as FormatDefinition<string>;
    return { validate: def.validate as (s: string) => boolean, ...(def.compare ? { compare: def.compare } : {}) };
  }
  throw new Error(`ajv-formats' "${name}" is not a function format: the fast formats need revisiting`);
}

const fullDate = original('date');
const fullDateTime = original('date-time');
const fullDateTimeValidate = fullDateTime.validate;
const fullUriValidate = original('uri').validate;

const C0 = 48; // '0'
const DASH = 45;
const COLON = 58;

/** The value of the two ASCII digits at i, or -1 if either is not a digit. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - C0;
  const b = s.charCodeAt(i + 1) - C0;
  // NaN (past the end) fails both comparisons as well.
  if (!(a >= 0 && a <= 9 && b >= 0 && b <= 9)) return -1;
  return a * 10 + b;
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/** Days in a month of the proleptic Gregorian calendar (month 1-12), as ajv-formats counts them. */
function daysIn(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * `YYYY-MM-DD` at the start of s (s may go on) with a real calendar day; false otherwise.
 * ajv-formats: /^(\d\d\d\d)-(\d\d)-(\d\d)$/ (\d is ASCII only without the u flag), month 1-12,
 * day 1 to the month's length with RFC 3339's leap years.
 */
function datePart(s: string): boolean {
  const hi = two(s, 0);
  const lo = two(s, 2);
  if (hi < 0 || lo < 0 || s.charCodeAt(4) !== DASH || s.charCodeAt(7) !== DASH) return false;
  const month = two(s, 5);
  const day = two(s, 8);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(hi * 100 + lo, month);
}

/** 'date': exactly ajv-formats' full 'date' (a complete reimplementation, no fallback needed). */
export function isDate(s: string): boolean {
  return s.length === 10 && datePart(s);
}

/**
 * 'date-time': `YYYY-MM-DD[Tt]HH:MM:SS[.f{1,9}]` then `Z`, `z` or `±HH:MM`, with hour <= 23,
 * minute <= 59, second <= 59 and an offset of at most 23:59, is accepted here. Those are inside
 * ajv-formats' full 'date-time' (split on /t|\s/i into exactly two parts, full-date, then
 * /^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$/i with a required zone, and
 * `hr <= 23 && min <= 59 && sec < 60`): the string holds only digits and fixed punctuation, so the
 * T is the only split point. The fraction is capped at 9 digits because ajv-formats compares
 * `+"59.9999…"` as a float, which rounds to 60 from ~15 nines on and is then a leap second, valid
 * only at 23:59 UTC. Everything else (leap seconds, +HHMM / +HH zones, spaces, long fractions,
 * rejects) gets ajv-formats' own answer.
 */
export function isDateTime(s: string): boolean {
  if (fastDateTime(s)) return true;
  return fullDateTimeValidate(s);
}

function fastDateTime(s: string): boolean {
  const n = s.length;
  if (n < 20 || !datePart(s)) return false;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return false; // 'T' | 't'
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  if (s.charCodeAt(13) !== COLON || s.charCodeAt(16) !== COLON) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  let i = 19;
  if (s.charCodeAt(i) === 46) {
    // '.': 1-9 digits
    const start = ++i;
    while (i < n && i - start < 10) {
      const c = s.charCodeAt(i) - C0;
      if (c < 0 || c > 9) break;
      i++;
    }
    const digits = i - start;
    if (digits < 1 || digits > 9) return false;
  }
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n; // 'Z' | 'z'
  if ((z === 43 || z === 45) && i + 6 === n && s.charCodeAt(i + 3) === COLON) {
    // '+' | '-', HH:MM
    const h = two(s, i + 1);
    const m = two(s, i + 4);
    return h >= 0 && h <= 23 && m >= 0 && m <= 59;
  }
  return false;
}

// Character sets of ajv-formats' URI regex (which is case-insensitive): pchar (unreserved /
// sub-delims / ':' / '@'), here with '/' as segments follow each other, and query / fragment
// characters (pchar, '/' and '?'); each with %HH between its characters.
const PATH = "[a-z0-9\\-._~!$&'()*+,;=:@/]";
const QUERY = "[a-z0-9\\-._~!$&'()*+,;=:@/?]";
const pct = (chars: string): string => `${chars}*(?:%[0-9a-f]{2}${chars}*)*`;
/**
 * `scheme://` then path characters, `?query`, `#fragment`. Each part can be matched only one way
 * (a set stops at the next part's first character), so this runs in linear time, ~3x faster than
 * ajv-formats' regex with its IPv6 alternatives.
 */
const FAST_URI = new RegExp(`^[a-z][a-z0-9+\\-.]*://${pct(PATH)}(?:\\?${pct(QUERY)})?(?:#${pct(QUERY)})?$`, 'i');

/**
 * 'uri': FAST_URI's strings are accepted by ajv-formats' too. Its regex begins the authority with
 * `\/?\/` and lets the host (reg-name) be empty, so after `scheme:` it takes one '/', an empty
 * host, and all the rest as a path-abempty of '/', pchar and %HH: `http://u@h:80/p` passes that
 * way, and so would `http://a@b@c` (the authority is in effect not checked). The string also holds
 * '/' and ':', which ajv-formats requires besides. Anything else (a stray '%', spaces, non-ASCII,
 * `[`, no "//") gets ajv-formats' own answer.
 */
export function isUri(s: string): boolean {
  return FAST_URI.test(s) || fullUriValidate(s);
}

/** What a uuid has at each of its 36 places: 1 a lowercase hex digit, 2 a dash. */
const UUID_SHAPE = Uint8Array.from({ length: 36 }, (_, i) => (i === 8 || i === 13 || i === 18 || i === 23 ? 2 : 1));
/** The same classes by character code (0: neither). */
const UUID_CLASS = new Uint8Array(128);
for (const c of '0123456789abcdef') UUID_CLASS[c.charCodeAt(0)] = 1;
UUID_CLASS[DASH] = 2;

/**
 * 'uuid': exactly UUID_PATTERN (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
 * lowercase only). By table, not by comparisons: random hex digits make a digit-or-letter branch
 * mispredict, and the regex is no faster than that (~2x slower than the table).
 */
export function isUuid(s: string): boolean {
  if (s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || UUID_CLASS[c] !== UUID_SHAPE[i]) return false;
  }
  return true;
}

/**
 * The definitions createAjv() registers, in the shapes ajv-formats gives them (an object for the
 * dates, a function for 'uri'). `compare` is ajv-formats' own: it only serves the
 * formatMinimum/formatMaximum keywords, which are not added, but it keeps the definitions whole.
 */
export const schemaFormats = {
  date: { validate: isDate, compare: fullDate.compare } satisfies StringFormat,
  'date-time': { validate: isDateTime, compare: fullDateTime.compare } satisfies StringFormat,
  uri: isUri,
  uuid: isUuid,
};

/** The originals, for the tests that hold the fast ones to them. */
export const originalFormats = {
  date: fullDate.validate,
  'date-time': fullDateTimeValidate,
  uri: fullUriValidate,
};
