from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.run_group_prompt_runs_item_status import RunGroupPromptRunsItemStatus

T = TypeVar("T", bound="RunGroupPromptRunsItem")


@_attrs_define
class RunGroupPromptRunsItem:
    """
    Attributes:
        id (UUID):
        prompt_id (UUID):
        engine_id (UUID):
        status (RunGroupPromptRunsItemStatus):
        completed_at (datetime.datetime):
        brand_mentioned (bool):
        brand_position (int | None):
        mention_count (int):
        citation_count (int):
    """

    id: UUID
    prompt_id: UUID
    engine_id: UUID
    status: RunGroupPromptRunsItemStatus
    completed_at: datetime.datetime
    brand_mentioned: bool
    brand_position: int | None
    mention_count: int
    citation_count: int

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        prompt_id = str(self.prompt_id)

        engine_id = str(self.engine_id)

        status = self.status.value

        completed_at = self.completed_at.isoformat()

        brand_mentioned = self.brand_mentioned

        brand_position: int | None
        brand_position = self.brand_position

        mention_count = self.mention_count

        citation_count = self.citation_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "prompt_id": prompt_id,
                "engine_id": engine_id,
                "status": status,
                "completed_at": completed_at,
                "brand_mentioned": brand_mentioned,
                "brand_position": brand_position,
                "mention_count": mention_count,
                "citation_count": citation_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        prompt_id = UUID(d.pop("prompt_id"))

        engine_id = UUID(d.pop("engine_id"))

        status = RunGroupPromptRunsItemStatus(d.pop("status"))

        completed_at = datetime.datetime.fromisoformat(d.pop("completed_at"))

        brand_mentioned = d.pop("brand_mentioned")

        def _parse_brand_position(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        brand_position = _parse_brand_position(d.pop("brand_position"))

        mention_count = d.pop("mention_count")

        citation_count = d.pop("citation_count")

        run_group_prompt_runs_item = cls(
            id=id,
            prompt_id=prompt_id,
            engine_id=engine_id,
            status=status,
            completed_at=completed_at,
            brand_mentioned=brand_mentioned,
            brand_position=brand_position,
            mention_count=mention_count,
            citation_count=citation_count,
        )

        return run_group_prompt_runs_item
