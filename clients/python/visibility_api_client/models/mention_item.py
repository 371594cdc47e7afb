from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.mention_item_entity_type import MentionItemEntityType

T = TypeVar("T", bound="MentionItem")


@_attrs_define
class MentionItem:
    """
    Attributes:
        id (UUID):
        prompt_run_id (UUID):
        run_group_id (UUID):
        prompt_id (UUID):
        engine_id (UUID):
        entity_type (MentionItemEntityType):
        competitor_id (None | UUID):
        name (str):
        position (int):
        sentiment (float | None):
        snippet (None | str):
        observed_at (datetime.datetime):
    """

    id: UUID
    prompt_run_id: UUID
    run_group_id: UUID
    prompt_id: UUID
    engine_id: UUID
    entity_type: MentionItemEntityType
    competitor_id: None | UUID
    name: str
    position: int
    sentiment: float | None
    snippet: None | str
    observed_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        prompt_run_id = str(self.prompt_run_id)

        run_group_id = str(self.run_group_id)

        prompt_id = str(self.prompt_id)

        engine_id = str(self.engine_id)

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

        observed_at = self.observed_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "prompt_run_id": prompt_run_id,
                "run_group_id": run_group_id,
                "prompt_id": prompt_id,
                "engine_id": engine_id,
                "entity_type": entity_type,
                "competitor_id": competitor_id,
                "name": name,
                "position": position,
                "sentiment": sentiment,
                "snippet": snippet,
                "observed_at": observed_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        prompt_run_id = UUID(d.pop("prompt_run_id"))

        run_group_id = UUID(d.pop("run_group_id"))

        prompt_id = UUID(d.pop("prompt_id"))

        engine_id = UUID(d.pop("engine_id"))

        entity_type = MentionItemEntityType(d.pop("entity_type"))

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

        observed_at = datetime.datetime.fromisoformat(d.pop("observed_at"))

        mention_item = cls(
            id=id,
            prompt_run_id=prompt_run_id,
            run_group_id=run_group_id,
            prompt_id=prompt_id,
            engine_id=engine_id,
            entity_type=entity_type,
            competitor_id=competitor_id,
            name=name,
            position=position,
            sentiment=sentiment,
            snippet=snippet,
            observed_at=observed_at,
        )

        return mention_item
