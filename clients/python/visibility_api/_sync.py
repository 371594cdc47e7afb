"""The synchronous client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
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


class RetryTransport(httpx.BaseTransport):
    """Sends a request again after a 429, once Retry-After has passed: at most ``max_retries`` times,
    and only while Retry-After is at most ``max_wait`` seconds. Then the 429 is the answer."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        max_retries: int,
        max_wait: float,
        on_retry: Callable[[float], None],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._inner = inner
        self._max_retries = max_retries
        self._max_wait = max_wait
        self._on_retry = on_retry
        self._sleep = sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        attempt = 0
        while True:
            response = self._inner.handle_request(request)
            if response.status_code != 429 or attempt >= self._max_retries:
                return response
            wait = retry_after_seconds(response.headers)
            wait = 1.0 if wait is None else wait  # the API always sends it; a proxy's 429 may not
            if wait > self._max_wait:
                return response
            response.read()
            response.close()
            attempt += 1
            self._on_retry(wait)
            self._sleep(wait)

    def close(self) -> None:
        self._inner.close()


class VisibilityClient:
    """The Visibility API over HTTP, synchronously.

    ``base_url`` is where the API listens (``/v1/public`` is added unless there); ``api_key`` goes in
    ``X-API-Key`` (or ``Authorization: ApiKey KEY`` with ``auth="authorization"``) on every request,
    the generated calls' included. A 429 is retried after its Retry-After, ``max_retries`` times.

    - ``get(path, **query)``: one answer's JSON; ``pages()`` / ``items()``: every page of a list,
      following ``Link: <...>; rel="next"``.
    - ``generated``: the typed client of ``visibility_api_client`` for its calls, e.g.
      ``checked(visibility.sync_detailed(project_id, client=api.generated, engine_ids=[...]))``.
    - ``last_rate_limit``: the RateLimit fields of the last answer; ``retries``: 429s retried so far.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        auth: AuthHeader = "x-api-key",
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = api_base(base_url)
        self.last_rate_limit: RateLimit | None = None
        self.retries = 0
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=auth_headers(api_key, auth),
            timeout=timeout,
            transport=RetryTransport(
                transport or httpx.HTTPTransport(), max_retries, max_retry_wait, self._count_retry
            ),
            event_hooks={"response": [self._remember]},
        )
        self.generated = visibility_api_client.Client(base_url=self.base_url, raise_on_unexpected_status=True)
        self.generated.set_httpx_client(self._http)

    def _count_retry(self, _wait: float) -> None:
        self.retries += 1

    def _remember(self, response: httpx.Response) -> None:
        self.last_rate_limit = rate_limit_of(response.headers)

    def _send(self, url: str, params: QueryPairs | None = None) -> httpx.Response:
        response = self._http.get(url, params=params)
        if not response.is_success:
            raise ApiError.of(response.status_code, response.headers, response.read())
        return response

    def get(self, path: str, **query: Any) -> Any:
        """The JSON body of ``GET {base}{path}?{query}``; raises ApiError when it is not 2xx."""
        return self._send(path, query_params(query)).json()

    def pages(self, path: str, **query: Any) -> Iterator[Page]:
        """Every page of a list, first to last: each item once, in the list's order."""
        response = self._send(path, query_params(query))
        while True:
            target = next_link(response.headers)
            url = None if target is None else resolve_next(self.base_url, str(response.url), target)
            yield Page(items=response.json(), rate_limit=rate_limit_of(response.headers), next=url)
            if url is None:
                return
            response = self._send(url)  # the Link target as it is: it keeps every parameter

    def items(self, path: str, **query: Any) -> Iterator[dict[str, Any]]:
        """The items of every page, one by one."""
        for page in self.pages(path, **query):
            yield from page.items

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> VisibilityClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
