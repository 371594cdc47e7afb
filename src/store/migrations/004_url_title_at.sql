-- When a bucket's title was cited (title_at): across buckets the latest titled citation gives a URL's
-- title, and a bucket's last_at can be a later citation without one. Filled in for existing rows from
-- the runs themselves: the latest succeeded run of the bucket citing the URL with a title.
ALTER TABLE agg_url_day ADD COLUMN title_at TEXT;
UPDATE agg_url_day SET title_at = (
  SELECT max(r.completed_at) FROM prompt_runs r, json_each(r.citations) c
  WHERE r.project_id = agg_url_day.project_id AND r.engine_id = agg_url_day.engine_id AND r.day = agg_url_day.day
    AND r.prompt_id = agg_url_day.prompt_id AND r.status = 'succeeded'
    AND json_extract(c.value, '$.url') = agg_url_day.url AND json_extract(c.value, '$.title') IS NOT NULL
) WHERE title IS NOT NULL;
