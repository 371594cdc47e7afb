// A run's facts (src/store/run-facts.ts): the text the writer stores (encodeFacts, or migration 013's
// json_array for a migrated row), read by name (decodeFacts), and the brief parses the read models use:
// for sums (briefFacts), which reads the text only up to the cited URLs, and for whether a run counts
// (factsKey). They must give what decoding the whole text gives, whatever the URLs and titles hold.
import t from 'tap';
import Database from 'better-sqlite3';
import { briefFacts, decodeFacts, encodeFacts, factsKey, type FactsArray, type RunFacts } from '../../src/store/run-store';
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
        const text = encodeFacts(runOf(seed, hits, urls), hits + 1, urls);
        const { cited: _cited, ...brief } = decodeFacts(text);
        t.same(briefFacts(text), brief, `seed ${seed}, ${hits} hits, ${urls} URLs`);
        t.same(factsKey(text), { engineId: brief.engineId, promptId: brief.promptId }, 'and factsKey its engine and prompt');
        t.equal((JSON.parse(text) as FactsArray).length, 8);
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
    const whole = JSON.parse(encodeFacts(run, 2, 3)) as FactsArray;
    const text = migrated.get(whole[0], whole[1], whole[2], whole[3], whole[4], whole[5], JSON.stringify(whole[6]), JSON.stringify(whole[7])) as string;
    t.same(JSON.parse(text), whole, `seed ${seed}: the same facts`);
    const { cited: _cited, ...brief } = decodeFacts(text);
    t.same(briefFacts(text), brief, `seed ${seed}: the brief parse of SQLite's text`);
    t.same(factsKey(text), { engineId: whole[0], promptId: whole[1] }, `seed ${seed}: factsKey of SQLite's text`);
  }
});

t.test('the codec: encodeFacts writes what JSON.stringify of the stored array writes, and decodeFacts gives each fact back by name', async (t) => {
  for (let seed = 1; seed <= 30; seed++) {
    const run = runOf(seed, seed % 4, seed % 5);
    const text = encodeFacts(run, 7, 9);
    const array: FactsArray = [run.engine_id, run.prompt_id, run.brand_position, run.brand_sentiment, 7, 9,
      run.competitors.map((h) => [h.competitor_id, h.position, h.sentiment]), run.urls.map((u) => [u.url, u.title])];
    t.equal(text, JSON.stringify(array), `seed ${seed}: the stored bytes`);
    t.same(decodeFacts(text), {
      engineId: run.engine_id, promptId: run.prompt_id, brandPosition: run.brand_position, brandSentiment: run.brand_sentiment,
      mentionCount: 7, citationCount: 9, hits: array[6], cited: array[7],
    }, `seed ${seed}: every fact by name`);
  }
});
