// A run's facts (src/store/run-store.ts): the text the writer stores (factsJson, or migration 013's
// json_array for a migrated row) and the brief parses the read models use: for sums (briefFacts),
// which reads the text only up to the cited URLs, and for whether a run counts (factsKey). They must
// give what parsing the whole text gives, whatever the URLs and titles hold.
import t from 'tap';
import Database from 'better-sqlite3';
import { briefFacts, factsJson, factsKey, type FactsArray, type RunFacts } from '../../src/store/run-store';
import { id } from '../helpers/events';

const TITLES = [null, '', 'Plain title', 'Brackets ]] and [[ and ],[', 'Quotes " and \\ backslash', 'Line\nbreak \u0001 control', 'Emoji 🦊 and ü',
  '[]', ']', 'null]]'];
const URLS = ['https://example.com/a', 'https://example.com/b?q=[1]]&x="y"', 'https://ex.org/%5D%5D', 'https://a.test/]],[[null'];

/** The facts of a run with `hits` competitor mentions and `urls` cited URLs, values varied by `seed`. */
function runOf(seed: number, hits: number, urls: number): RunFacts {
  return {
    id: id(seed, '11111111'), run_group_id: id(seed, '22222222'), project_id: id(seed, '33333333'), engine_id: id(seed, '44444444'),
    prompt_id: id(seed, '55555555'), day: '2026-01-05', status: 'succeeded', completed_at: '2026-01-05T12:00:00.000Z',
    brand_position: seed % 3 === 0 ? null : (seed % 7) + 1, brand_sentiment: seed % 2 === 0 ? null : ((seed * 37) % 200) / 100 - 1,
    competitors: Array.from({ length: hits }, (_, i) => ({ competitor_id: id(seed * 10 + i, '66666666'), position: i + 1, sentiment: i % 2 === 0 ? null : -0.123456 })),
    urls: Array.from({ length: urls }, (_, i) => ({ url: URLS[(seed + i) % URLS.length]! + `/${i}`, domain: 'example.com', title: TITLES[(seed + i) % TITLES.length]! })),
  };
}

t.test('briefFacts gives the first seven facts of the whole text (factsKey the first two), whatever the URLs and titles hold', async (t) => {
  let n = 0;
  for (let seed = 1; seed <= 40; seed++) {
    for (const hits of [0, 1, 3]) {
      for (const urls of [0, 1, 4]) {
        const text = factsJson(runOf(seed, hits, urls), hits + 1, urls);
        const whole = JSON.parse(text) as FactsArray;
        t.same(briefFacts(text), whole.slice(0, 7), `seed ${seed}, ${hits} hits, ${urls} URLs`);
        t.same(factsKey(text), whole.slice(0, 2), 'and factsKey its engine and prompt');
        t.equal(whole.length, 8);
        n += 1;
      }
    }
  }
  t.equal(n, 360);
});

t.test('and of a migrated row (SQLite json_array, as migration 013 writes facts)', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  const migrated = db.prepare('SELECT json_array(?, ?, ?, ?, ?, ?, json(?), json(?))').pluck();
  for (let seed = 1; seed <= 12; seed++) {
    const run = runOf(seed, seed % 4, seed % 5);
    const whole = JSON.parse(factsJson(run, 2, 3)) as FactsArray;
    const text = migrated.get(whole[0], whole[1], whole[2], whole[3], whole[4], whole[5], JSON.stringify(whole[6]), JSON.stringify(whole[7])) as string;
    t.same(JSON.parse(text), whole, `seed ${seed}: the same facts`);
    t.same(briefFacts(text), whole.slice(0, 7), `seed ${seed}: the brief parse of SQLite's text`);
    t.same(factsKey(text), whole.slice(0, 2), `seed ${seed}: factsKey of SQLite's text`);
  }
});
