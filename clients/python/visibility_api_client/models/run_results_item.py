from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.run_results_item_status import RunResultsItemStatus

if TYPE_CHECKING:
    from ..models.run_results_item_citations_item import RunResultsItemCitationsItem
    from ..models.run_results_item_mentions_item import RunResultsItemMentionsItem


T = TypeVar("T", bound="RunResultsItem")


@_attrs_define
class RunResultsItem:
    """
    Attributes:
        prompt_run_id (UUID):
        prompt_id (UUID):
        prompt_text (None | str):
        engine_id (UUID):
        status (RunResultsItemStatus):
        completed_at (datetime.datetime):
        response_excerpt (None | str):
        brand_mentioned (bool):
        brand_position (int | None):
        sentiment (float | None):
        mentions (list[RunResultsItemMentionsItem]):
        citations (list[RunResultsItemCitationsItem]):
    """

    prompt_run_id: UUID
    prompt_id: UUID
    prompt_text: None | str
    engine_id: UUID
    status: RunResultsItemStatus
    completed_at: datetime.datetime
    response_excerpt: None | str
    brand_mentioned: bool
    brand_position: int | None
    sentiment: float | None
    mentions: list[RunResultsItemMentionsItem]
    citations: list[RunResultsItemCitationsItem]

    def to_dict(self) -> dict[str, Any]:
        prompt_run_id = str(self.prompt_run_id)

        prompt_id = str(self.prompt_id)

        prompt_text: None | str
        prompt_text = self.prompt_text

        engine_id = str(self.engine_id)

        status = self.status.value

        completed_at = self.completed_at.isoformat()

        response_excerpt: None | str
        response_excerpt = self.response_excerpt

        brand_mentioned = self.brand_mentioned

        brand_position: int | None
        brand_position = self.brand_position

        sentiment: float | None
        sentiment = self.sentiment

        mentions = []
        for mentions_item_data in self.mentions:
            mentions_item = mentions_item_data.to_dict()
            mentions.append(mentions_item)

        citations = []
        for citations_item_data in self.citations:
            citations_item = citations_item_data.to_dict()
            citations.append(citations_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "prompt_run_id": prompt_run_id,
                "prompt_id": prompt_id,
                "prompt_text": prompt_text,
                "engine_id": engine_id,
                "status": status,
                "completed_at": completed_at,
                "response_excerpt": response_excerpt,
                "brand_mentioned": brand_mentioned,
                "brand_position": brand_position,
                "sentiment": sentiment,
                "mentions": mentions,
                "citations": citations,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_results_item_citations_item import RunResultsItemCitationsItem  # noqa: PLC0415
        from ..models.run_results_item_mentions_item import RunResultsItemMentionsItem  # noqa: PLC0415

        d = dict(src_dict)
        prompt_run_id = UUID(d.pop("prompt_run_id"))

        prompt_id = UUID(d.pop("prompt_id"))

        def _parse_prompt_text(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        prompt_text = _parse_prompt_text(d.pop("prompt_text"))

        engine_id = UUID(d.pop("engine_id"))

        status = RunResultsItemStatus(d.pop("status"))

        completed_at = datetime.datetime.fromisoformat(d.pop("completed_at"))

        def _parse_response_excerpt(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        response_excerpt = _parse_response_excerpt(d.pop("response_excerpt"))

        brand_mentioned = d.pop("brand_mentioned")

        def _parse_brand_position(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        brand_position = _parse_brand_position(d.pop("brand_position"))

        def _parse_sentiment(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        sentiment = _parse_sentiment(d.pop("sentiment"))

        mentions = []
        _mentions = d.pop("mentions")
        for mentions_item_data in _mentions:
            mentions_item = RunResultsItemMentionsItem.from_dict(mentions_item_data)

            mentions.append(mentions_item)

        citations = []
        _citations = d.pop("citations")
        for citations_item_data in _citations:
            citations_item = RunResultsItemCitationsItem.from_dict(citations_item_data)

            citations.append(citations_item)

        run_results_item = cls(
            prompt_run_id=prompt_run_id,
            prompt_id=prompt_id,
            prompt_text=prompt_text,
            engine_id=engine_id,
            status=status,
            completed_at=completed_at,
            response_excerpt=response_excerpt,
            brand_mentioned=brand_mentioned,
            brand_position=brand_position,
            sentiment=sentiment,
            mentions=mentions,
            citations=citations,
        )

        return run_results_item
