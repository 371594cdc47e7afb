from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_response import ErrorResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project_id: UUID,
    *,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id_header, Unset):
        headers["Last-Event-ID"] = last_event_id_header

    params: dict[str, Any] = {}

    params["last_event_id"] = last_event_id_query

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/projects/{project_id}/changes".format(
            project_id=quote(str(project_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = ErrorResponse.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorResponse.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorResponse.from_dict(response.json())

        return response_404

    if response.status_code == 405:
        response_405 = ErrorResponse.from_dict(response.json())

        return response_405

    if response.status_code == 429:
        response_429 = ErrorResponse.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = ErrorResponse.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = ErrorResponse.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ErrorResponse.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
) -> Response[ErrorResponse | str]:
    """Live change feed of the project (Server-Sent Events)

     text/event-stream. `event: change` per committed change to the project, `id` = its X-Data-Version,
    `data` = {"project_id", "data_version", "endpoints": [operationIds that may have changed],
    "data_as_of"}; `event: ready` (same data without endpoints) first on a fresh stream; `event: reset`
    (endpoints: all) when Last-Event-ID cannot be resumed from; comment lines as heartbeats. The stream
    ends when the key or the project's share is revoked, or the service stops.

    Args:
        project_id (UUID):
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | str]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        last_event_id_query=last_event_id_query,
        last_event_id_header=last_event_id_header,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
) -> ErrorResponse | str | None:
    """Live change feed of the project (Server-Sent Events)

     text/event-stream. `event: change` per committed change to the project, `id` = its X-Data-Version,
    `data` = {"project_id", "data_version", "endpoints": [operationIds that may have changed],
    "data_as_of"}; `event: ready` (same data without endpoints) first on a fresh stream; `event: reset`
    (endpoints: all) when Last-Event-ID cannot be resumed from; comment lines as heartbeats. The stream
    ends when the key or the project's share is revoked, or the service stops.

    Args:
        project_id (UUID):
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | str
    """

    return sync_detailed(
        project_id=project_id,
        client=client,
        last_event_id_query=last_event_id_query,
        last_event_id_header=last_event_id_header,
    ).parsed


async def asyncio_detailed(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
) -> Response[ErrorResponse | str]:
    """Live change feed of the project (Server-Sent Events)

     text/event-stream. `event: change` per committed change to the project, `id` = its X-Data-Version,
    `data` = {"project_id", "data_version", "endpoints": [operationIds that may have changed],
    "data_as_of"}; `event: ready` (same data without endpoints) first on a fresh stream; `event: reset`
    (endpoints: all) when Last-Event-ID cannot be resumed from; comment lines as heartbeats. The stream
    ends when the key or the project's share is revoked, or the service stops.

    Args:
        project_id (UUID):
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | str]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        last_event_id_query=last_event_id_query,
        last_event_id_header=last_event_id_header,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
) -> ErrorResponse | str | None:
    """Live change feed of the project (Server-Sent Events)

     text/event-stream. `event: change` per committed change to the project, `id` = its X-Data-Version,
    `data` = {"project_id", "data_version", "endpoints": [operationIds that may have changed],
    "data_as_of"}; `event: ready` (same data without endpoints) first on a fresh stream; `event: reset`
    (endpoints: all) when Last-Event-ID cannot be resumed from; comment lines as heartbeats. The stream
    ends when the key or the project's share is revoked, or the service stops.

    Args:
        project_id (UUID):
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | str
    """

    return (
        await asyncio_detailed(
            project_id=project_id,
            client=client,
            last_event_id_query=last_event_id_query,
            last_event_id_header=last_event_id_header,
        )
    ).parsed
