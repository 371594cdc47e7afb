from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

from ..models.terms_item_kind import TermsItemKind

T = TypeVar("T", bound="TermsItem")


@_attrs_define
class TermsItem:
    """
    Attributes:
        id (UUID):
        project_id (UUID):
        value (str):
        kind (TermsItemKind):
        created_at (datetime.datetime):
    """

    id: UUID
    project_id: UUID
    value: str
    kind: TermsItemKind
    created_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        project_id = str(self.project_id)

        value = self.value

        kind = self.kind.value

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "value": value,
                "kind": kind,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        project_id = UUID(d.pop("project_id"))

        value = d.pop("value")

        kind = TermsItemKind(d.pop("kind"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        terms_item = cls(
            id=id,
            project_id=project_id,
            value=value,
            kind=kind,
            created_at=created_at,
        )

        return terms_item
