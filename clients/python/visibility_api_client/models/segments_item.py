from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="SegmentsItem")


@_attrs_define
class SegmentsItem:
    """
    Attributes:
        id (UUID):
        project_id (UUID):
        name (str):
        description (None | str):
        prompt_count (int):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    project_id: UUID
    name: str
    description: None | str
    prompt_count: int
    created_at: datetime.datetime
    updated_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        project_id = str(self.project_id)

        name = self.name

        description: None | str
        description = self.description

        prompt_count = self.prompt_count

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "name": name,
                "description": description,
                "prompt_count": prompt_count,
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

        name = d.pop("name")

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        prompt_count = d.pop("prompt_count")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        segments_item = cls(
            id=id,
            project_id=project_id,
            name=name,
            description=description,
            prompt_count=prompt_count,
            created_at=created_at,
            updated_at=updated_at,
        )

        return segments_item
