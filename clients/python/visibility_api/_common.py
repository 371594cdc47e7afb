"""What the sync and async clients share: the auth headers, query values, the Link and RateLimit
fields, Retry-After, and the error an answer that is not 2xx raises."""

from __future__ import annotations

import datetime
import email.utils
import enum
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx

from visibility_api_client.models.error_response import ErrorResponse
from visibility_api_client.types import Response

#: Every path of the API is under it: the clients add it to a base URL that lacks it.
BASE_PATH = "/v1/public"

#: How a key is presented: ``X-API-Key: KEY`` (the default) or ``Authorization: ApiKey KEY``.
AuthHeader = Literal["x-api-key", "authorization"]

#: One query value: a list is sent as the parameter repeated once per item (``engine_ids=a&engine_ids=b``).
QueryValue = str | int | float | bool | datetime.date | uuid.UUID | enum.Enum | None
Query = Mapping[str, QueryValue | Iterable[QueryValue]]

T = TypeVar("T")


def api_base(base_url: str) -> str:
    """``http://host:8080`` -> ``http://host:8080/v1/public`` (unchanged when it already ends so)."""
    trimmed = base_url.rstrip("/")
    return trimmed if trimmed.endswith(BASE_PATH) else trimmed + BASE_PATH


def auth_headers(api_key: str, auth: AuthHeader = "x-api-key") -> dict[str, str]:
    """The header carrying the key, in either form the API accepts."""
    if not api_key or any(c.isspace() for c in api_key):
        raise ValueError("api_key must be a non-empty key without spaces")
    if auth == "x-api-key":
        return {"X-API-Key": api_key}
    if auth == "authorization":
        return {"Authorization": f"ApiKey {api_key}"}
    raise ValueError(f"auth must be 'x-api-key' or 'authorization', not {auth!r}")


def _query_value(v: QueryValue) -> str:
    if isinstance(v, bool):  # before int: bool is an int
        return "true" if v else "false"
    if isinstance(v, enum.Enum):
        return str(v.value)
    if isinstance(v, datetime.datetime):
        return v.isoformat()
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


#: Query pairs as httpx takes them (what query_params returns).
QueryPairs = list[tuple[str, str | int | float | bool | None]]


def query_params(params: Query) -> QueryPairs:
    """Keyword arguments as query pairs: None is left out, a list or tuple repeats the parameter."""
    pairs: QueryPairs = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            pairs.extend((name, _query_value(v)) for v in value if v is not None)
        else:
            pairs.append((name, _query_value(value)))  # type: ignore[arg-type]  # an iterable other than the above is a str here
    return pairs


@dataclass(frozen=True)
class RateLimit:
    """The RateLimit fields of an answer (draft-ietf-httpapi-ratelimit-headers), sent when the service
    limits keys: ``RateLimit-Policy: "per-key";q=20;w=2`` and ``RateLimit: "per-key";r=19;t=1``."""

    policy: str
    #: q: the requests the quota allows per window (the burst).
    quota: int | None
    #: w: the window, in seconds.
    window_seconds: int | None
    #: r: requests left now.
    remaining: int
    #: t: seconds until the whole quota is back (on a 429: until a retry can succeed).
    reset_seconds: int


def _sf_item(value: str) -> tuple[str, dict[str, str]]:
    first, *rest = [s.strip() for s in value.split(";")]
    params = {}
    for p in rest:
        name, eq, v = p.partition("=")
        if eq:
            params[name.strip()] = v.strip()
    return first.strip('"'), params


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None


def rate_limit_of(headers: Mapping[str, str]) -> RateLimit | None:
    """The RateLimit fields parsed; None when the answer has none (the service's limiter is off)."""
    field = headers.get("ratelimit")
    if field is None:
        return None
    name, limit = _sf_item(field)
    _, policy = _sf_item(headers.get("ratelimit-policy", ""))
    return RateLimit(
        policy=name,
        quota=_int(policy.get("q")),
        window_seconds=_int(policy.get("w")),
        remaining=_int(limit.get("r")) or 0,
        reset_seconds=_int(limit.get("t")) or 0,
    )


# <target> then its parameters; a quoted value may hold commas and semicolons.
_LINK = re.compile(r'<([^>]*)>\s*((?:;\s*[^;,=\s]+\s*(?:=\s*(?:"[^"]*"|[^;,\s]*))?\s*)*)')
_REL = re.compile(r';\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))', re.IGNORECASE)


def next_link(headers: Mapping[str, str]) -> str | None:
    """The target of ``Link: <...>; rel="next"`` (RFC 8288), or None on the last page."""
    link = headers.get("link")
    if not link:
        return None
    for m in _LINK.finditer(link):
        for rel in _REL.finditer(m.group(2)):
            if "next" in (rel.group(1) or rel.group(2) or "").lower().split():
                return m.group(1)
    return None


def resolve_next(base: str, current: str, target: str) -> str:
    """The next page's absolute URL. It must stay on the API's origin: the key is sent with it."""
    url = urljoin(current, target)
    a, b = urlsplit(url), urlsplit(base)
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        raise ValueError(f"the next page's link leaves the API ({a.scheme}://{a.netloc}): not followed")
    return url


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())


class ApiError(Exception):
    """An answer that is not 2xx. The API's error contract is ``{"error": true, "message": "..."}``
    with the code in ``X-Error-Code`` (e.g. ``invalid_parameter``, ``not_found``, ``rate_limited``)."""

    def __init__(self, status: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status = status
        self.headers = httpx.Headers(headers)
        text = content.decode("utf-8", errors="replace")
        body: Any
        try:
            body = json.loads(text)
        except ValueError:
            body = text  # not JSON (a proxy's page): the text
        #: The body: the error contract's dict, or the text when it was not JSON.
        self.body: Any = body
        #: The contract's message, or the text of a body that was not the contract.
        self.message: str = body["message"] if isinstance(body, dict) and isinstance(body.get("message"), str) else text
        #: X-Error-Code: the stable machine-readable reason (None from something other than the API).
        self.code: str | None = self.headers.get("x-error-code")
        self.rate_limit: RateLimit | None = rate_limit_of(self.headers)
        #: Retry-After in seconds, on a 429 (and a 503 while the service loads).
        self.retry_after: float | None = retry_after_seconds(self.headers)
        super().__init__(f"{status} {self.code or ''}: {self.message}".replace("  ", " "))

    @classmethod
    def of(cls, status: int, headers: Mapping[str, str], content: bytes) -> ApiError:
        """The error of an answer: RateLimitedError for a 429."""
        return (RateLimitedError if status == 429 else ApiError)(status, headers, content)


class RateLimitedError(ApiError):
    """A 429 still refused after the client's retries (or one whose Retry-After was too long to wait)."""


def checked(response: Response[T | ErrorResponse]) -> T:
    """The parsed body of a generated call's response; raises ApiError when it is not 2xx.

    ``checked(visibility.sync_detailed(project_id, client=api.generated, ...))``
    """
    status = int(response.status_code)
    if not 200 <= status < 300:
        raise ApiError.of(status, response.headers, response.content)
    parsed = response.parsed
    if parsed is None or isinstance(parsed, ErrorResponse):  # a 2xx the document does not describe
        raise ApiError.of(status, response.headers, response.content)
    return parsed


@dataclass(frozen=True)
class Page:
    """One page of a list: its items as the API sent them (JSON objects as dicts)."""

    items: list[dict[str, Any]]
    #: The RateLimit fields of its answer (None when the service sends none).
    rate_limit: RateLimit | None
    #: The next page's URL (from the Link header), None on the last page.
    next: str | None
