"""The live service these tests run against: test/clients/python-client.test.ts starts two
`visibility-api serve --demo` on free 127.0.0.1 ports (one with a small --rate-limit) and sets:

  VISIBILITY_API_URL           the service, no rate limit
  VISIBILITY_API_LIMITED_URL   the same demo data, 1 request per second per key (bursts of 2)
  VISIBILITY_API_KEY           a demo key with projects
  VISIBILITY_API_OTHER_KEY     a key of another account, with projects of its own

By hand: start the two services, export the four, `scripts/python-env.sh pytest clients/python/tests`
with PYTHONPATH=clients/python.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from visibility_api import VisibilityClient


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: these tests need a live `visibility-api serve --demo` (see conftest.py)")
    return value


@pytest.fixture(scope="session")
def base_url() -> str:
    return _env("VISIBILITY_API_URL")


@pytest.fixture(scope="session")
def limited_url() -> str:
    return _env("VISIBILITY_API_LIMITED_URL")


@pytest.fixture(scope="session")
def api_key() -> str:
    return _env("VISIBILITY_API_KEY")


@pytest.fixture(scope="session")
def other_key() -> str:
    return _env("VISIBILITY_API_OTHER_KEY")


@pytest.fixture
def api(base_url: str, api_key: str) -> Iterator[VisibilityClient]:
    with VisibilityClient(base_url, api_key) as client:
        yield client


@pytest.fixture
def project_id(api: VisibilityClient) -> str:
    projects = api.get("/projects")
    assert projects, "the demo key sees projects"
    return str(projects[0]["id"])
