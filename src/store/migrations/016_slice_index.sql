-- 016: a filter on the runs' dimensions reads only the index. Migration 015 decided the
-- filter on runs_recent's entries, but still fetched each matching run's row (its event and facts:
-- ~2 KB, a page each) to read its facts: a year with a country filter was ~21 ms of row fetches on
-- the bench world. This index holds what the metric reports take of such a run, grouped by the dims
-- number, so a filtered range is one contiguous run of entries per matching combination: its facts
-- without the cited URLs (the element briefFacts never reads: 200 bytes of ~550, which keeps the
-- index and its writes small; the citation reports fetch the rows). Only succeeded runs that name a
-- dimension: nothing else can match a filter, and a v1 log (no dimensions) writes nothing here.
CREATE INDEX runs_slices ON runs (project, dims, completed_at, id, json_remove(facts, '$[7]'))
  WHERE status = 'succeeded' AND dims IS NOT NULL;
