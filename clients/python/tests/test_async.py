"""The same with the asyncio client: what a notebook or a service awaiting the API does."""

from __future__ import annotations

import asyncio
import datetime
import uuid

import pytest

from visibility_api import ApiError, AsyncVisibilityClient, RateLimitedError, checked
from visibility_api_client.api.default import visibility
from visibility_api_client.models import VisibilityReport


def test_async_projects_and_a_report(base_url: str, api_key: str) -> None:
    async def run() -> None:
        async with AsyncVisibilityClient(base_url, api_key, auth="authorization") as api:
            project_id = (await api.get("/projects"))[0]["id"]
            engines = [uuid.UUID(e["id"]) for e in await api.get(f"/projects/{project_id}/engines")][:2]
            end = datetime.date.fromisoformat((await api.get(f"/projects/{project_id}/visibility"))["window_end"])
            start = end - datetime.timedelta(days=13)
            report = checked(
                await visibility.asyncio_detailed(
                    uuid.UUID(project_id), client=api.generated, engine_ids=engines, start_date=start, end_date=end
                )
            )
            assert isinstance(report, VisibilityReport) and (report.window_start, report.window_end) == (start, end)
            raw = await api.get(
                f"/projects/{project_id}/visibility", engine_ids=engines, start_date=start, end_date=end
            )
            assert report.to_dict() == raw

    asyncio.run(run())


def test_async_every_page_of_ranked_lists(base_url: str, api_key: str) -> None:
    async def run() -> None:
        async with AsyncVisibilityClient(base_url, api_key) as api:
            ids = [p["id"] for p in await api.get("/projects")]
            assert len(ids) >= 2

            async def walk(project_id: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
                total = await api.get(f"/projects/{project_id}/citations", limit=1000)
                return [c async for c in api.items(f"/projects/{project_id}/citations", limit=6)], total

            # Two walks at once on one client: each follows its own Link headers.
            for items, total in await asyncio.gather(*(walk(i) for i in ids)):
                assert 6 < len(total) < 1000 and items == total

    asyncio.run(run())


def test_async_error_contract_and_another_accounts_project(base_url: str, api_key: str, other_key: str) -> None:
    async def run() -> None:
        async with AsyncVisibilityClient(base_url, api_key) as api, AsyncVisibilityClient(base_url, other_key) as other:
            theirs = (await other.get("/projects"))[0]["id"]
            with pytest.raises(ApiError) as caught:
                await api.get(f"/projects/{theirs}/mentions")
            assert caught.value.status == 404 and caught.value.code == "not_found"
            assert caught.value.body == {"error": True, "message": caught.value.message}
            mine = (await api.get("/projects"))[0]["id"]
            with pytest.raises(ApiError) as bad:
                async for _ in api.pages(f"/projects/{mine}/mentions", engine_ids=["not-a-uuid"]):
                    pass
            assert bad.value.status == 400 and "engine_ids" in bad.value.message

    asyncio.run(run())


def test_async_429_is_retried_or_raised(limited_url: str, api_key: str) -> None:
    async def run() -> None:
        async with AsyncVisibilityClient(limited_url, api_key, max_retries=0) as once:
            with pytest.raises(RateLimitedError) as caught:
                await asyncio.gather(*(once.get("/projects") for _ in range(8)))
            assert caught.value.retry_after is not None and caught.value.retry_after >= 1
        async with AsyncVisibilityClient(limited_url, api_key, max_retries=6) as api:
            answers = await asyncio.gather(*(api.get("/projects") for _ in range(6)))
            assert all(a == answers[0] for a in answers) and api.retries >= 1
            assert api.last_rate_limit is not None and api.last_rate_limit.policy == "per-key"

    asyncio.run(run())
