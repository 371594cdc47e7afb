from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.run_results_item_mentions_item_entity_type import RunResultsItemMentionsItemEntityType

T = TypeVar("T", bound="RunResultsItemMentionsItem")


@_attrs_define
class RunResultsItemMentionsItem:
    """
    Attributes:
        entity_type (RunResultsItemMentionsItemEntityType):
        competitor_id (None | UUID):
        name (str):
        position (int):
        sentiment (float | None):
        snippet (None | str):
    """

    entity_type: RunResultsItemMentionsItemEntityType
    competitor_id: None | UUID
    name: str
    position: int
    sentiment: float | None
    snippet: None | str

    def to_dict(self) -> dict[str, Any]:
        entity_type = self.entity_type.value

        competitor_id: None | str
        if isinstance(self.competitor_id, UUID):
            competitor_id = str(self.competitor_id)
        else:
            competitor_id = self.competitor_id

        name = self.name

        position = self.position

        sentiment: float | None
        sentiment = self.sentiment

        snippet: None | str
        snippet = self.snippet

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "entity_type": entity_type,
                "competitor_id": competitor_id,
                "name": name,
                "position": position,
                "sentiment": sentiment,
                "snippet": snippet,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        entity_type = RunResultsItemMentionsItemEntityType(d.pop("entity_type"))

        def _parse_competitor_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                competitor_id_type_0 = UUID(data)

                return competitor_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        competitor_id = _parse_competitor_id(d.pop("competitor_id"))

        name = d.pop("name")

        position = d.pop("position")

        def _parse_sentiment(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        sentiment = _parse_sentiment(d.pop("sentiment"))

        def _parse_snippet(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        snippet = _parse_snippet(d.pop("snippet"))

        run_results_item_mentions_item = cls(
            entity_type=entity_type,
            competitor_id=competitor_id,
            name=name,
            position=position,
            sentiment=sentiment,
            snippet=snippet,
        )

        return run_results_item_mentions_item
