"""What a user does with the synchronous client, against a live `serve --demo`."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest

from visibility_api import ApiError, RateLimitedError, VisibilityClient, checked
from visibility_api_client.api.default import mentions, project, projects, visibility
from visibility_api_client.models import ErrorResponse, VisibilityReport


def test_lists_projects_with_either_auth_header(base_url: str, api_key: str) -> None:
    with VisibilityClient(base_url, api_key) as a, VisibilityClient(base_url, api_key, auth="authorization") as b:
        listed = a.get("/projects")
        assert listed and listed == b.get("/projects")
        typed = checked(projects.sync_detailed(client=b.generated))
        assert [str(p.id) for p in typed] == [p["id"] for p in listed]
        assert a.last_rate_limit is None  # the service's limiter is off: no RateLimit fields


def two_engines_and_a_week(
    api: VisibilityClient, project_id: str
) -> tuple[list[uuid.UUID], datetime.date, datetime.date]:
    engines = [uuid.UUID(e["id"]) for e in api.get(f"/projects/{project_id}/engines")]
    assert len(engines) >= 3, "the demo project tracks several engines"
    end = datetime.date.fromisoformat(api.get(f"/projects/{project_id}/visibility")["window_end"])
    return engines[:2], end - datetime.timedelta(days=6), end


def test_report_with_engine_ids_and_a_date_range(api: VisibilityClient, project_id: str) -> None:
    engines, start, end = two_engines_and_a_week(api, project_id)
    response = visibility.sync_detailed(
        uuid.UUID(project_id), client=api.generated, engine_ids=engines, start_date=start, end_date=end
    )
    report = checked(response)
    assert isinstance(report, VisibilityReport)
    assert (report.window_start, report.window_end) == (start, end)
    assert {b.engine_id for b in report.engine_breakdown} == set(engines)
    # The typed model holds the whole body, as the API sent it for the same query.
    raw = api.get(f"/projects/{project_id}/visibility", engine_ids=engines, start_date=start, end_date=end)
    assert report.to_dict() == raw
    everything = api.get(f"/projects/{project_id}/visibility", start_date=start, end_date=end)
    assert 0 < report.run_count < everything["run_count"], "engine_ids narrowed the report"


def test_every_page_of_a_ranked_list_is_the_whole_list(api: VisibilityClient, project_id: str) -> None:
    total = api.get(f"/projects/{project_id}/citations", limit=1000)
    assert 5 < len(total) < 1000, "one request with the largest limit holds the whole list"
    pages = list(api.pages(f"/projects/{project_id}/citations", limit=5))
    assert len(pages) == -(-len(total) // 5)
    assert all(len(p.items) == 5 and p.next for p in pages[:-1]) and pages[-1].next is None
    items = [item for page in pages for item in page.items]
    assert items == total, "each citation once, in rank order"
    assert list(api.items(f"/projects/{project_id}/citations", limit=7)) == total


def test_every_page_keeps_the_filters(api: VisibilityClient, project_id: str) -> None:
    engines, start, end = two_engines_and_a_week(api, project_id)
    query = {"engine_ids": engines[:1], "start_date": start, "end_date": end}
    total = api.get(f"/projects/{project_id}/mentions", limit=1000, **query)
    assert 50 < len(total) < 1000
    items = list(api.items(f"/projects/{project_id}/mentions", limit=50, **query))
    assert items == total
    assert {m["engine_id"] for m in items} == {str(engines[0])}
    # The generated call sends the same query (engine_ids repeated once per value).
    first = checked(
        mentions.sync_detailed(
            uuid.UUID(project_id),
            client=api.generated,
            limit=50,
            engine_ids=engines[:1],
            start_date=start,
            end_date=end,
        )
    )
    assert [(str(m.id), m.observed_at) for m in first] == [
        (m["id"], datetime.datetime.fromisoformat(m["observed_at"])) for m in total[:50]
    ]


def test_forum_leads_page_to_the_unpaged_list(api: VisibilityClient, project_id: str) -> None:
    everything = api.get(f"/projects/{project_id}/forum/leads")  # no limit: the whole list
    assert len(everything) > 2
    assert list(api.items(f"/projects/{project_id}/forum/leads", limit=2)) == everything


def test_a_bad_request_raises_the_error_contract(api: VisibilityClient, project_id: str) -> None:
    with pytest.raises(ApiError) as caught:
        api.get(f"/projects/{project_id}/citations", limit=0)
    e = caught.value
    assert e.status == 400 and e.code == "invalid_parameter"
    assert e.body == {"error": True, "message": e.message} and "limit" in e.message
    assert e.headers.get("metric-definitions-version")
    # A generated call answers the contract as its model; checked() raises the same error.
    day = datetime.date(2026, 1, 10)
    response = visibility.sync_detailed(
        uuid.UUID(project_id), client=api.generated, start_date=day, end_date=day - datetime.timedelta(days=1)
    )
    assert isinstance(response.parsed, ErrorResponse) and response.status_code == 400
    with pytest.raises(ApiError) as again:
        checked(response)
    assert again.value.status == 400 and again.value.code == "invalid_parameter"
    assert again.value.message == response.parsed.message and "start_date" in again.value.message


def test_another_accounts_project_is_404(api: VisibilityClient, base_url: str, other_key: str) -> None:
    with VisibilityClient(base_url, other_key) as other:
        theirs = other.get("/projects")
    assert theirs and not {p["id"] for p in theirs} & {p["id"] for p in api.get("/projects")}
    with pytest.raises(ApiError) as caught:
        api.get(f"/projects/{theirs[0]['id']}")
    with pytest.raises(ApiError) as unknown:
        api.get(f"/projects/{uuid.uuid4()}")
    assert caught.value.status == 404 and caught.value.code == "not_found"
    assert caught.value.body == unknown.value.body, "the same answer as for a project that does not exist"
    response = project.sync_detailed(uuid.UUID(theirs[0]["id"]), client=api.generated)
    assert response.status_code == 404 and isinstance(response.parsed, ErrorResponse)


def test_429_without_retries_raises_with_the_rate_limit_fields(limited_url: str, api_key: str) -> None:
    with VisibilityClient(limited_url, api_key, max_retries=0) as api:
        with pytest.raises(RateLimitedError) as caught:
            for _ in range(20):
                api.get("/projects")
                assert api.last_rate_limit is not None and api.last_rate_limit.policy == "per-key"
        e = caught.value
        assert e.status == 429 and e.code == "rate_limited" and e.body["error"] is True
        assert e.retry_after is not None and e.retry_after >= 1
        assert e.rate_limit is not None and e.rate_limit.remaining == 0 and e.rate_limit.quota == 2
        assert api.retries == 0
        time.sleep(e.retry_after)  # the bucket is whole again for the next test


def test_429_is_retried_after_retry_after(limited_url: str, api_key: str) -> None:
    with VisibilityClient(limited_url, api_key, max_retries=5) as api:
        answers = [api.get("/projects") for _ in range(6)]  # three times the burst
        assert all(a == answers[0] for a in answers)
        assert api.retries >= 1, "some were refused with 429 and sent again"
        assert api.last_rate_limit is not None and api.last_rate_limit.quota == 2


def test_every_page_while_rate_limited(base_url: str, limited_url: str, api_key: str) -> None:
    with VisibilityClient(base_url, api_key) as free, VisibilityClient(limited_url, api_key) as api:
        project_id = free.get("/projects")[0]["id"]
        everything = free.get(f"/projects/{project_id}/forum/leads")
        pages = list(api.pages(f"/projects/{project_id}/forum/leads", limit=1))
        assert [p.items[0] for p in pages] == everything
        assert api.retries >= 1 and all(p.rate_limit is not None for p in pages)
