"""An independent reader of an export directory (pyarrow, not this project's code): for each query
{project, start, end} on stdin (a JSON list), the totals the API states for the same project and
days, computed from the Parquet files alone. Prints a JSON list of results, one per query."""
import json
import sys
from collections import defaultdict

import pyarrow.compute as pc
import pyarrow.dataset as ds

out = sys.argv[1]


def table(name, project):
    try:
        d = ds.dataset(f"{out}/{name}", format="parquet", partitioning="hive")
    except FileNotFoundError:
        return None
    return d.to_table(filter=ds.field("project_id") == project)


def in_days(t, column, start, end):
    days = pc.cast(t[column], "string")
    return pc.and_(pc.greater_equal(days, start), pc.less_equal(days, end))


def answer(q):
    project, start, end = q["project"], q["start"], q["end"]
    r = {}
    runs = table("runs", project)
    counted = runs.filter(pc.and_(runs["counted"], in_days(runs, "day", start, end)))
    r["counted_runs"] = counted.num_rows
    r["runs_all"] = runs.num_rows
    r["run_ids_unique"] = len(set(runs["run_id"].to_pylist())) == runs.num_rows

    daily = table("daily_visibility", project)
    daily = daily.filter(in_days(daily, "day", start, end))
    by_engine = defaultdict(lambda: [0, 0])
    by_day = defaultdict(lambda: [0, 0])
    for day, engine, n, m in zip(daily["day"].to_pylist(), daily["engine_id"].to_pylist(), daily["run_count"].to_pylist(), daily["mentioned_count"].to_pylist()):
        by_engine[engine][0] += n
        by_engine[engine][1] += m
        by_day[day.isoformat()][0] += n
        by_day[day.isoformat()][1] += m
    r["daily_runs"] = sum(v[0] for v in by_engine.values())
    r["daily_mentioned"] = sum(v[1] for v in by_engine.values())
    r["by_engine"] = dict(by_engine)
    r["by_day"] = dict(by_day)

    mentions = table("mentions", project)
    mentions = mentions.filter(pc.and_(mentions["counted"], in_days(mentions, "day", start, end)))
    r["mention_ids"] = sorted(mentions["mention_id"].to_pylist())

    cites = table("citations", project)
    cites = cites.filter(pc.and_(cites["counted"], in_days(cites, "day", start, end)))
    runs_by_url = defaultdict(set)
    for url, run in zip(cites["url"].to_pylist(), cites["run_id"].to_pylist()):
        runs_by_url[url].add(run)
    r["citations_by_url"] = {u: len(s) for u, s in runs_by_url.items()}

    forum = table("forum_posts", project)
    r["forum_post_ids"] = sorted(forum["post_id"].to_pylist()) if forum is not None else []
    return r


print(json.dumps([answer(q) for q in json.load(sys.stdin)]))
