from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_response import ErrorResponse
from ...models.run_results_item import RunResultsItem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project_id: UUID,
    run_group_id: UUID,
    *,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    if not isinstance(cache_control, Unset):
        headers["Cache-Control"] = cache_control

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/projects/{project_id}/runs/{run_group_id}/results".format(
            project_id=quote(str(project_id), safe=""),
            run_group_id=quote(str(run_group_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorResponse | list[RunResultsItem] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for componentsschemas_run_results_item_data in _response_200:
            componentsschemas_run_results_item = RunResultsItem.from_dict(componentsschemas_run_results_item_data)

            response_200.append(componentsschemas_run_results_item)

        return response_200

    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | ErrorResponse | list[RunResultsItem]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project_id: UUID,
    run_group_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | list[RunResultsItem]]:
    """Every prompt run of a run group of the project with its mentions and citations

    Args:
        project_id (UUID):
        run_group_id (UUID):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | list[RunResultsItem]]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        run_group_id=run_group_id,
        if_none_match=if_none_match,
        cache_control=cache_control,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project_id: UUID,
    run_group_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | list[RunResultsItem] | None:
    """Every prompt run of a run group of the project with its mentions and citations

    Args:
        project_id (UUID):
        run_group_id (UUID):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | list[RunResultsItem]
    """

    return sync_detailed(
        project_id=project_id,
        run_group_id=run_group_id,
        client=client,
        if_none_match=if_none_match,
        cache_control=cache_control,
    ).parsed


async def asyncio_detailed(
    project_id: UUID,
    run_group_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | list[RunResultsItem]]:
    """Every prompt run of a run group of the project with its mentions and citations

    Args:
        project_id (UUID):
        run_group_id (UUID):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | list[RunResultsItem]]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        run_group_id=run_group_id,
        if_none_match=if_none_match,
        cache_control=cache_control,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project_id: UUID,
    run_group_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | list[RunResultsItem] | None:
    """Every prompt run of a run group of the project with its mentions and citations

    Args:
        project_id (UUID):
        run_group_id (UUID):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | list[RunResultsItem]
    """

    return (
        await asyncio_detailed(
            project_id=project_id,
            run_group_id=run_group_id,
            client=client,
            if_none_match=if_none_match,
            cache_control=cache_control,
        )
    ).parsed
