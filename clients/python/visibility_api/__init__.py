"""A Python client for the Visibility Dashboard API.

``visibility_api_client`` (beside this package) is generated from the API's OpenAPI document by
openapi-python-client (``npm run gen:client`` in the repository): a typed call per endpoint and an
attrs model per body. This package is the thin layer written by hand over it, which regeneration
never touches: sync and async clients sending the API key, following ``Link: <...>; rel="next"``
through every page, reading the RateLimit fields, retrying a 429 after Retry-After (bounded), and
raising ApiError (the API's ``{"error": true, "message": ...}`` and its X-Error-Code) on the rest.

    from visibility_api import VisibilityClient

    with VisibilityClient("http://localhost:8080", api_key) as api:
        projects = api.get("/projects")
        runs = list(api.items(f"/projects/{projects[0]['id']}/runs", limit=200))
"""

from ._async import AsyncRetryTransport, AsyncVisibilityClient
from ._common import (
    BASE_PATH,
    ApiError,
    Page,
    RateLimit,
    RateLimitedError,
    api_base,
    checked,
    next_link,
    rate_limit_of,
)
from ._sync import RetryTransport, VisibilityClient

__all__ = [
    "BASE_PATH",
    "ApiError",
    "AsyncRetryTransport",
    "AsyncVisibilityClient",
    "Page",
    "RateLimit",
    "RateLimitedError",
    "RetryTransport",
    "VisibilityClient",
    "api_base",
    "checked",
    "next_link",
    "rate_limit_of",
]
