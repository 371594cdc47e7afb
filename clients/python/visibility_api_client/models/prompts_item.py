from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="PromptsItem")


@_attrs_define
class PromptsItem:
    """
    Attributes:
        id (UUID):
        project_id (UUID):
        text (str):
        segment_ids (list[UUID]):
        active (bool):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    project_id: UUID
    text: str
    segment_ids: list[UUID]
    active: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        project_id = str(self.project_id)

        text = self.text

        segment_ids = []
        for segment_ids_item_data in self.segment_ids:
            segment_ids_item = str(segment_ids_item_data)
            segment_ids.append(segment_ids_item)

        active = self.active

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "text": text,
                "segment_ids": segment_ids,
                "active": active,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        project_id = UUID(d.pop("project_id"))

        text = d.pop("text")

        segment_ids = []
        _segment_ids = d.pop("segment_ids")
        for segment_ids_item_data in _segment_ids:
            segment_ids_item = UUID(segment_ids_item_data)

            segment_ids.append(segment_ids_item)

        active = d.pop("active")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        prompts_item = cls(
            id=id,
            project_id=project_id,
            text=text,
            segment_ids=segment_ids,
            active=active,
            created_at=created_at,
            updated_at=updated_at,
        )

        return prompts_item
