"""The asynchronous client (asyncio): the same as the synchronous one, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

import visibility_api_client

from ._common import (
    ApiError,
    AuthHeader,
    Page,
    QueryPairs,
    RateLimit,
    api_base,
    auth_headers,
    next_link,
    query_params,
    rate_limit_of,
    resolve_next,
    retry_after_seconds,
)


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    """RetryTransport's behaviour for httpx.AsyncClient: a 429 sent again after Retry-After, bounded."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        max_retries: int,
        max_wait: float,
        on_retry: Callable[[float], None],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._inner = inner
        self._max_retries = max_retries
        self._max_wait = max_wait
        self._on_retry = on_retry
        self._sleep = sleep

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        attempt = 0
        while True:
            response = await self._inner.handle_async_request(request)
            if response.status_code != 429 or attempt >= self._max_retries:
                return response
            wait = retry_after_seconds(response.headers)
            wait = 1.0 if wait is None else wait
            if wait > self._max_wait:
                return response
            await response.aread()
            await response.aclose()
            attempt += 1
            self._on_retry(wait)
            await self._sleep(wait)

    async def aclose(self) -> None:
        await self._inner.aclose()


class AsyncVisibilityClient:
    """VisibilityClient for asyncio: ``await api.get(...)``, ``async for page in api.pages(...)``,
    ``await asyncio_detailed(..., client=api.generated)``. Close it with ``await api.aclose()`` or
    ``async with``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        auth: AuthHeader = "x-api-key",
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = api_base(base_url)
        self.last_rate_limit: RateLimit | None = None
        self.retries = 0
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=auth_headers(api_key, auth),
            timeout=timeout,
            transport=AsyncRetryTransport(
                transport or httpx.AsyncHTTPTransport(), max_retries, max_retry_wait, self._count_retry
            ),
            event_hooks={"response": [self._remember]},
        )
        self.generated = visibility_api_client.Client(base_url=self.base_url, raise_on_unexpected_status=True)
        self.generated.set_async_httpx_client(self._http)

    def _count_retry(self, _wait: float) -> None:
        self.retries += 1

    async def _remember(self, response: httpx.Response) -> None:
        self.last_rate_limit = rate_limit_of(response.headers)

    async def _send(self, url: str, params: QueryPairs | None = None) -> httpx.Response:
        response = await self._http.get(url, params=params)
        if not response.is_success:
            raise ApiError.of(response.status_code, response.headers, await response.aread())
        return response

    async def get(self, path: str, **query: Any) -> Any:
        """The JSON body of ``GET {base}{path}?{query}``; raises ApiError when it is not 2xx."""
        return (await self._send(path, query_params(query))).json()

    async def pages(self, path: str, **query: Any) -> AsyncIterator[Page]:
        """Every page of a list, first to last: each item once, in the list's order."""
        response = await self._send(path, query_params(query))
        while True:
            target = next_link(response.headers)
            url = None if target is None else resolve_next(self.base_url, str(response.url), target)
            yield Page(items=response.json(), rate_limit=rate_limit_of(response.headers), next=url)
            if url is None:
                return
            response = await self._send(url)

    async def items(self, path: str, **query: Any) -> AsyncIterator[dict[str, Any]]:
        """The items of every page, one by one."""
        async for page in self.pages(path, **query):
            for item in page.items:
                yield item

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncVisibilityClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
