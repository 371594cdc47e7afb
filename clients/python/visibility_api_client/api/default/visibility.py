import datetime
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_response import ErrorResponse
from ...models.visibility_compare import VisibilityCompare
from ...models.visibility_group_by_item import VisibilityGroupByItem
from ...models.visibility_report import VisibilityReport
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project_id: UUID,
    *,
    engine_ids: list[UUID] | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    group_by: list[VisibilityGroupByItem] | Unset = UNSET,
    compare: VisibilityCompare | Unset = UNSET,
    compare_start_date: datetime.date | Unset = UNSET,
    compare_end_date: datetime.date | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    if not isinstance(cache_control, Unset):
        headers["Cache-Control"] = cache_control

    params: dict[str, Any] = {}

    json_engine_ids: list[str] | Unset = UNSET
    if not isinstance(engine_ids, Unset):
        json_engine_ids = []
        for engine_ids_item_data in engine_ids:
            engine_ids_item = str(engine_ids_item_data)
            json_engine_ids.append(engine_ids_item)

    params["engine_ids"] = json_engine_ids

    json_start_date: str | Unset = UNSET
    if not isinstance(start_date, Unset):
        json_start_date = start_date.isoformat()
    params["start_date"] = json_start_date

    json_end_date: str | Unset = UNSET
    if not isinstance(end_date, Unset):
        json_end_date = end_date.isoformat()
    params["end_date"] = json_end_date

    json_country: list[str] | Unset = UNSET
    if not isinstance(country, Unset):
        json_country = country

    params["country"] = json_country

    json_persona: list[str] | Unset = UNSET
    if not isinstance(persona, Unset):
        json_persona = persona

    params["persona"] = json_persona

    json_model: list[str] | Unset = UNSET
    if not isinstance(model, Unset):
        json_model = model

    params["model"] = json_model

    json_segment_ids: list[str] | Unset = UNSET
    if not isinstance(segment_ids, Unset):
        json_segment_ids = []
        for segment_ids_item_data in segment_ids:
            segment_ids_item = str(segment_ids_item_data)
            json_segment_ids.append(segment_ids_item)

    params["segment_ids"] = json_segment_ids

    json_group_by: list[str] | Unset = UNSET
    if not isinstance(group_by, Unset):
        json_group_by = []
        for group_by_item_data in group_by:
            group_by_item = group_by_item_data.value
            json_group_by.append(group_by_item)

    params["group_by"] = json_group_by

    json_compare: str | Unset = UNSET
    if not isinstance(compare, Unset):
        json_compare = compare.value

    params["compare"] = json_compare

    json_compare_start_date: str | Unset = UNSET
    if not isinstance(compare_start_date, Unset):
        json_compare_start_date = compare_start_date.isoformat()
    params["compare_start_date"] = json_compare_start_date

    json_compare_end_date: str | Unset = UNSET
    if not isinstance(compare_end_date, Unset):
        json_compare_end_date = compare_end_date.isoformat()
    params["compare_end_date"] = json_compare_end_date

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/projects/{project_id}/visibility".format(
            project_id=quote(str(project_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorResponse | VisibilityReport | None:
    if response.status_code == 200:
        response_200 = VisibilityReport.from_dict(response.json())

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
) -> Response[Any | ErrorResponse | VisibilityReport]:
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
    engine_ids: list[UUID] | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    group_by: list[VisibilityGroupByItem] | Unset = UNSET,
    compare: VisibilityCompare | Unset = UNSET,
    compare_start_date: datetime.date | Unset = UNSET,
    compare_end_date: datetime.date | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | VisibilityReport]:
    """Current visibility report: the brand over the current window, per prompt, per engine, and its top
    competitors

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        group_by (list[VisibilityGroupByItem] | Unset):
        compare (VisibilityCompare | Unset):
        compare_start_date (datetime.date | Unset):
        compare_end_date (datetime.date | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | VisibilityReport]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        engine_ids=engine_ids,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        group_by=group_by,
        compare=compare,
        compare_start_date=compare_start_date,
        compare_end_date=compare_end_date,
        if_none_match=if_none_match,
        cache_control=cache_control,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    engine_ids: list[UUID] | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    group_by: list[VisibilityGroupByItem] | Unset = UNSET,
    compare: VisibilityCompare | Unset = UNSET,
    compare_start_date: datetime.date | Unset = UNSET,
    compare_end_date: datetime.date | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | VisibilityReport | None:
    """Current visibility report: the brand over the current window, per prompt, per engine, and its top
    competitors

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        group_by (list[VisibilityGroupByItem] | Unset):
        compare (VisibilityCompare | Unset):
        compare_start_date (datetime.date | Unset):
        compare_end_date (datetime.date | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | VisibilityReport
    """

    return sync_detailed(
        project_id=project_id,
        client=client,
        engine_ids=engine_ids,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        group_by=group_by,
        compare=compare,
        compare_start_date=compare_start_date,
        compare_end_date=compare_end_date,
        if_none_match=if_none_match,
        cache_control=cache_control,
    ).parsed


async def asyncio_detailed(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    engine_ids: list[UUID] | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    group_by: list[VisibilityGroupByItem] | Unset = UNSET,
    compare: VisibilityCompare | Unset = UNSET,
    compare_start_date: datetime.date | Unset = UNSET,
    compare_end_date: datetime.date | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | VisibilityReport]:
    """Current visibility report: the brand over the current window, per prompt, per engine, and its top
    competitors

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        group_by (list[VisibilityGroupByItem] | Unset):
        compare (VisibilityCompare | Unset):
        compare_start_date (datetime.date | Unset):
        compare_end_date (datetime.date | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | VisibilityReport]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        engine_ids=engine_ids,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        group_by=group_by,
        compare=compare,
        compare_start_date=compare_start_date,
        compare_end_date=compare_end_date,
        if_none_match=if_none_match,
        cache_control=cache_control,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    engine_ids: list[UUID] | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    group_by: list[VisibilityGroupByItem] | Unset = UNSET,
    compare: VisibilityCompare | Unset = UNSET,
    compare_start_date: datetime.date | Unset = UNSET,
    compare_end_date: datetime.date | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | VisibilityReport | None:
    """Current visibility report: the brand over the current window, per prompt, per engine, and its top
    competitors

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        group_by (list[VisibilityGroupByItem] | Unset):
        compare (VisibilityCompare | Unset):
        compare_start_date (datetime.date | Unset):
        compare_end_date (datetime.date | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | VisibilityReport
    """

    return (
        await asyncio_detailed(
            project_id=project_id,
            client=client,
            engine_ids=engine_ids,
            start_date=start_date,
            end_date=end_date,
            country=country,
            persona=persona,
            model=model,
            segment_ids=segment_ids,
            group_by=group_by,
            compare=compare,
            compare_start_date=compare_start_date,
            compare_end_date=compare_end_date,
            if_none_match=if_none_match,
            cache_control=cache_control,
        )
    ).parsed
