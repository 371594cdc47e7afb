from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnginesItem")


@_attrs_define
class EnginesItem:
    """
    Attributes:
        id (UUID):
        name (str):
        provider (str):
        model (None | str):
        tracked_since (datetime.datetime):
    """

    id: UUID
    name: str
    provider: str
    model: None | str
    tracked_since: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        provider = self.provider

        model: None | str
        model = self.model

        tracked_since = self.tracked_since.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "name": name,
                "provider": provider,
                "model": model,
                "tracked_since": tracked_since,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        provider = d.pop("provider")

        def _parse_model(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        model = _parse_model(d.pop("model"))

        tracked_since = datetime.datetime.fromisoformat(d.pop("tracked_since"))

        engines_item = cls(
            id=id,
            name=name,
            provider=provider,
            model=model,
            tracked_since=tracked_since,
        )

        return engines_item
