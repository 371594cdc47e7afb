from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="CitationItem")


@_attrs_define
class CitationItem:
    """
    Attributes:
        url (str):
        domain (str):
        title (None | str):
        citation_count (int):
        prompt_count (int):
        engine_ids (list[UUID]):
        is_own_domain (bool):
        first_cited_at (datetime.datetime):
        last_cited_at (datetime.datetime):
    """

    url: str
    domain: str
    title: None | str
    citation_count: int
    prompt_count: int
    engine_ids: list[UUID]
    is_own_domain: bool
    first_cited_at: datetime.datetime
    last_cited_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        domain = self.domain

        title: None | str
        title = self.title

        citation_count = self.citation_count

        prompt_count = self.prompt_count

        engine_ids = []
        for engine_ids_item_data in self.engine_ids:
            engine_ids_item = str(engine_ids_item_data)
            engine_ids.append(engine_ids_item)

        is_own_domain = self.is_own_domain

        first_cited_at = self.first_cited_at.isoformat()

        last_cited_at = self.last_cited_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "domain": domain,
                "title": title,
                "citation_count": citation_count,
                "prompt_count": prompt_count,
                "engine_ids": engine_ids,
                "is_own_domain": is_own_domain,
                "first_cited_at": first_cited_at,
                "last_cited_at": last_cited_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        domain = d.pop("domain")

        def _parse_title(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        title = _parse_title(d.pop("title"))

        citation_count = d.pop("citation_count")

        prompt_count = d.pop("prompt_count")

        engine_ids = []
        _engine_ids = d.pop("engine_ids")
        for engine_ids_item_data in _engine_ids:
            engine_ids_item = UUID(engine_ids_item_data)

            engine_ids.append(engine_ids_item)

        is_own_domain = d.pop("is_own_domain")

        first_cited_at = datetime.datetime.fromisoformat(d.pop("first_cited_at"))

        last_cited_at = datetime.datetime.fromisoformat(d.pop("last_cited_at"))

        citation_item = cls(
            url=url,
            domain=domain,
            title=title,
            citation_count=citation_count,
            prompt_count=prompt_count,
            engine_ids=engine_ids,
            is_own_domain=is_own_domain,
            first_cited_at=first_cited_at,
            last_cited_at=last_cited_at,
        )

        return citation_item
