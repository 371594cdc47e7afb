from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="Project")


@_attrs_define
class Project:
    """A project the key's account owns or that is shared with it.

    Attributes:
        id (UUID):
        company_id (UUID):
        name (str):
        domain (None | str):
        description (None | str):
        category_summary (None | str):
        status (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    company_id: UUID
    name: str
    domain: None | str
    description: None | str
    category_summary: None | str
    status: str
    created_at: datetime.datetime
    updated_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        company_id = str(self.company_id)

        name = self.name

        domain: None | str
        domain = self.domain

        description: None | str
        description = self.description

        category_summary: None | str
        category_summary = self.category_summary

        status = self.status

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "company_id": company_id,
                "name": name,
                "domain": domain,
                "description": description,
                "category_summary": category_summary,
                "status": status,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        company_id = UUID(d.pop("company_id"))

        name = d.pop("name")

        def _parse_domain(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        domain = _parse_domain(d.pop("domain"))

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        def _parse_category_summary(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        category_summary = _parse_category_summary(d.pop("category_summary"))

        status = d.pop("status")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        project = cls(
            id=id,
            company_id=company_id,
            name=name,
            domain=domain,
            description=description,
            category_summary=category_summary,
            status=status,
            created_at=created_at,
            updated_at=updated_at,
        )

        return project
