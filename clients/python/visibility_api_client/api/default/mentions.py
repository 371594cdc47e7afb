import datetime
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_response import ErrorResponse
from ...models.mention_item import MentionItem
from ...models.mentions_entity_type import MentionsEntityType
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project_id: UUID,
    *,
    engine_ids: list[UUID] | Unset = UNSET,
    limit: int | Unset = 100,
    entity_type: MentionsEntityType | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    cursor: str | Unset = UNSET,
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

    params["limit"] = limit

    json_entity_type: str | Unset = UNSET
    if not isinstance(entity_type, Unset):
        json_entity_type = entity_type.value

    params["entity_type"] = json_entity_type

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

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/projects/{project_id}/mentions".format(
            project_id=quote(str(project_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorResponse | list[MentionItem] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for componentsschemas_mentions_item_data in _response_200:
            componentsschemas_mentions_item = MentionItem.from_dict(componentsschemas_mentions_item_data)

            response_200.append(componentsschemas_mentions_item)

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
) -> Response[Any | ErrorResponse | list[MentionItem]]:
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
    limit: int | Unset = 100,
    entity_type: MentionsEntityType | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    cursor: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | list[MentionItem]]:
    """Brand and competitor mentions in AI answers, newest first

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        limit (int | Unset):  Default: 100.
        entity_type (MentionsEntityType | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        cursor (str | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | list[MentionItem]]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        engine_ids=engine_ids,
        limit=limit,
        entity_type=entity_type,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        cursor=cursor,
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
    limit: int | Unset = 100,
    entity_type: MentionsEntityType | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    cursor: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | list[MentionItem] | None:
    """Brand and competitor mentions in AI answers, newest first

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        limit (int | Unset):  Default: 100.
        entity_type (MentionsEntityType | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        cursor (str | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | list[MentionItem]
    """

    return sync_detailed(
        project_id=project_id,
        client=client,
        engine_ids=engine_ids,
        limit=limit,
        entity_type=entity_type,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        cursor=cursor,
        if_none_match=if_none_match,
        cache_control=cache_control,
    ).parsed


async def asyncio_detailed(
    project_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    engine_ids: list[UUID] | Unset = UNSET,
    limit: int | Unset = 100,
    entity_type: MentionsEntityType | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    cursor: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Response[Any | ErrorResponse | list[MentionItem]]:
    """Brand and competitor mentions in AI answers, newest first

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        limit (int | Unset):  Default: 100.
        entity_type (MentionsEntityType | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        cursor (str | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse | list[MentionItem]]
    """

    kwargs = _get_kwargs(
        project_id=project_id,
        engine_ids=engine_ids,
        limit=limit,
        entity_type=entity_type,
        start_date=start_date,
        end_date=end_date,
        country=country,
        persona=persona,
        model=model,
        segment_ids=segment_ids,
        cursor=cursor,
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
    limit: int | Unset = 100,
    entity_type: MentionsEntityType | Unset = UNSET,
    start_date: datetime.date | Unset = UNSET,
    end_date: datetime.date | Unset = UNSET,
    country: list[str] | Unset = UNSET,
    persona: list[str] | Unset = UNSET,
    model: list[str] | Unset = UNSET,
    segment_ids: list[UUID] | Unset = UNSET,
    cursor: str | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    cache_control: str | Unset = UNSET,
) -> Any | ErrorResponse | list[MentionItem] | None:
    """Brand and competitor mentions in AI answers, newest first

    Args:
        project_id (UUID):
        engine_ids (list[UUID] | Unset):
        limit (int | Unset):  Default: 100.
        entity_type (MentionsEntityType | Unset):
        start_date (datetime.date | Unset):
        end_date (datetime.date | Unset):
        country (list[str] | Unset):
        persona (list[str] | Unset):
        model (list[str] | Unset):
        segment_ids (list[UUID] | Unset):
        cursor (str | Unset):
        if_none_match (str | Unset):
        cache_control (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse | list[MentionItem]
    """

    return (
        await asyncio_detailed(
            project_id=project_id,
            client=client,
            engine_ids=engine_ids,
            limit=limit,
            entity_type=entity_type,
            start_date=start_date,
            end_date=end_date,
            country=country,
            persona=persona,
            model=model,
            segment_ids=segment_ids,
            cursor=cursor,
            if_none_match=if_none_match,
            cache_control=cache_control,
        )
    ).parsed
