"""The header parsing the clients rely on, on the exact forms the service sends and the RFCs allow."""

from __future__ import annotations

import datetime
import email.utils
import uuid

import pytest

from visibility_api import RateLimit, api_base, next_link, rate_limit_of
from visibility_api._common import query_params, resolve_next, retry_after_seconds


def test_next_link() -> None:
    assert next_link({"link": '</v1/public/projects/p/runs?limit=5&cursor=abc>; rel="next"'}) == (
        "/v1/public/projects/p/runs?limit=5&cursor=abc"
    )
    assert next_link({"link": '<https://x/a>; rel="prev", <https://x/b>; rel="next"'}) == "https://x/b"
    assert next_link({"link": '<https://x/b>; title="a, b"; rel=next'}) == "https://x/b"
    assert next_link({"link": '<https://x/c>; rel="last next"'}) == "https://x/c"
    assert next_link({"link": '<https://x/a>; rel="prev"'}) is None
    assert next_link({}) is None


def test_rate_limit_fields() -> None:
    fields = {"ratelimit-policy": '"per-key";q=20;w=2', "ratelimit": '"per-key";r=17;t=1'}
    assert rate_limit_of(fields) == RateLimit("per-key", 20, 2, 17, 1)
    assert rate_limit_of({}) is None


def test_retry_after() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)
    assert 25 <= (retry_after_seconds({"retry-after": email.utils.format_datetime(later, usegmt=True)}) or 0) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None


def test_the_next_page_stays_on_the_api() -> None:
    base = "http://127.0.0.1:8080/v1/public"
    assert resolve_next(base, base + "/projects/p/runs", "/v1/public/projects/p/runs?cursor=c") == (
        "http://127.0.0.1:8080/v1/public/projects/p/runs?cursor=c"
    )
    with pytest.raises(ValueError):
        resolve_next(base, base + "/projects/p/runs", "http://elsewhere.example/steal")


def test_query_values_and_base() -> None:
    e = uuid.UUID("7f67a6e6-06e5-5218-8989-f0e83b0bc13e")
    assert query_params(
        {"engine_ids": [e, e], "start_date": datetime.date(2026, 1, 2), "limit": 5, "cursor": None}
    ) == [
        ("engine_ids", str(e)),
        ("engine_ids", str(e)),
        ("start_date", "2026-01-02"),
        ("limit", "5"),
    ]
    assert (
        api_base("http://h:1/") == "http://h:1/v1/public" and api_base("http://h:1/v1/public") == "http://h:1/v1/public"
    )
