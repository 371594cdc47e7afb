import type { RunFacts } from './run-store';

/**
 * The `facts` column of a run's row (migration 013): what the read models, the export and the
 * writer's recounts take of a run, so that none parses the whole event. One codec: the stored form is
 * a JSON array (FactsArray, written by encodeFacts, also by migration 013's json_array and read by
 * SQL as `facts ->> N` in migrations 013, 015, 016 and 022); everything else reads it by name
 * (RunFactFields) through decodeFacts, factFields, briefFacts or factsKey. A new fact is one more
 * field here: its name, its place in the array, and its encoding.
 */
export type FactsArray = [
  engine_id: string, prompt_id: string, brand_position: number | null, brand_sentiment: number | null, mention_count: number,
  citation_count: number, hits: Array<[competitor_id: string, position: number, sentiment: number | null]>, cited: Array<[url: string, title: string | null]>,
];

/** A competitor a run names, once at its best position, as its facts keep it. */
export type FactHit = [competitor_id: string, position: number, sentiment: number | null];
/** A URL a run cites, once, as its facts keep it (its title: null when none). */
export type FactUrl = [url: string, title: string | null];

/** A run's facts by name. */
export interface RunFactFields {
  engineId: string;
  promptId: string;
  /** The brand's best position; null when the answer does not mention it. */
  brandPosition: number | null;
  brandSentiment: number | null;
  mentionCount: number;
  citationCount: number;
  hits: FactHit[];
  cited: FactUrl[];
}

/** A run's facts without its cited URLs (briefFacts): what the brand and competitor sums and a run group's list take. */
export type BriefFactFields = Omit<RunFactFields, 'cited'>;

/** The array's places, by field: the one list of where each fact is stored. */
const AT = { engineId: 0, promptId: 1, brandPosition: 2, brandSentiment: 3, mentionCount: 4, citationCount: 5, hits: 6, cited: 7 } as const;

/** A stored array's facts by name (a page of runs parsed as one text gives arrays). */
export function factFields(a: FactsArray): RunFactFields {
  return {
    engineId: a[AT.engineId], promptId: a[AT.promptId], brandPosition: a[AT.brandPosition], brandSentiment: a[AT.brandSentiment],
    mentionCount: a[AT.mentionCount], citationCount: a[AT.citationCount], hits: a[AT.hits], cited: a[AT.cited],
  };
}

/** A stored `facts` text's facts by name. */
export function decodeFacts(text: string): RunFactFields {
  return factFields(JSON.parse(text) as FactsArray);
}

const CLOSE = 93; // ']'

/**
 * A run's facts without its cited URLs, parsed from the start of the stored text only. The URLs and
 * titles are most of a run's facts (~70 % of the bench log's), and parsing them made a week of a
 * busy live stream's runs (tens of thousands) cost the read models more than the writer. The text is
 * minified (encodeFacts, migration 013's json_array), and everything before the URLs is uuids, numbers
 * and null: the first '[' after the outer one opens the hits, which end at their first ']]' (an
 * empty list: '[]'). That prefix closed with ']' is the brief array (test/store/run-facts.test.ts holds it to
 * decodeFacts of the whole).
 */
export function briefFacts(text: string): BriefFactFields {
  const hits = text.indexOf('[', 1);
  const end = text.charCodeAt(hits + 1) === CLOSE ? hits + 2 : text.indexOf(']]', hits) + 2;
  const a = JSON.parse(`${text.slice(0, end)}]`) as FactsArray;
  return {
    engineId: a[AT.engineId], promptId: a[AT.promptId], brandPosition: a[AT.brandPosition], brandSentiment: a[AT.brandSentiment],
    mentionCount: a[AT.mentionCount], citationCount: a[AT.citationCount], hits: a[AT.hits],
  };
}

/** A run's engine and prompt ids, the first two of its facts (uuids: no comma inside), parsed alone. */
export function factsKey(text: string): { engineId: string; promptId: string } {
  const a = JSON.parse(`${text.slice(0, text.indexOf(',', text.indexOf(',') + 1))}]`) as [string, string];
  return { engineId: a[AT.engineId], promptId: a[AT.promptId] };
}

/**
 * A run's `facts` column: JSON.stringify of its FactsArray, written out (no array per hit and URL
 * made first). Ids are validated uuids and URLs URIs, which JSON never escapes: quoted as they are
 * (a URL that would need escaping is escaped all the same).
 */
export function encodeFacts(f: Pick<RunFacts, 'engine_id' | 'prompt_id' | 'brand_position' | 'brand_sentiment' | 'competitors' | 'urls'>,
  mentionCount: number, citationCount: number): string {
  let out = `["${f.engine_id}","${f.prompt_id}",${f.brand_position},${f.brand_sentiment},${mentionCount},${citationCount},[`;
  for (let i = 0; i < f.competitors.length; i += 1) {
    const h = f.competitors[i]!;
    out += `${i === 0 ? '' : ','}["${h.competitor_id}",${h.position},${h.sentiment}]`;
  }
  out += '],[';
  for (let i = 0; i < f.urls.length; i += 1) {
    const u = f.urls[i]!;
    out += `${i === 0 ? '' : ','}[${NEEDS_ESCAPE.test(u.url) ? JSON.stringify(u.url) : `"${u.url}"`},${u.title === null ? 'null' : JSON.stringify(u.title)}]`;
  }
  return `${out}]]`;
}

/** What JSON.stringify escapes in a string: a quote, a backslash, a control character, a lone surrogate. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
