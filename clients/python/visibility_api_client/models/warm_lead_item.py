from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.warm_lead_item_platform import WarmLeadItemPlatform

T = TypeVar("T", bound="WarmLeadItem")


@_attrs_define
class WarmLeadItem:
    """
    Attributes:
        url (str):
        domain (str):
        platform (WarmLeadItemPlatform):
        title (None | str):
        citation_count (int):
        prompt_count (int):
        engine_ids (list[UUID]):
        last_cited_at (datetime.datetime):
    """

    url: str
    domain: str
    platform: WarmLeadItemPlatform
    title: None | str
    citation_count: int
    prompt_count: int
    engine_ids: list[UUID]
    last_cited_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        domain = self.domain

        platform = self.platform.value

        title: None | str
        title = self.title

        citation_count = self.citation_count

        prompt_count = self.prompt_count

        engine_ids = []
        for engine_ids_item_data in self.engine_ids:
            engine_ids_item = str(engine_ids_item_data)
            engine_ids.append(engine_ids_item)

        last_cited_at = self.last_cited_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "domain": domain,
                "platform": platform,
                "title": title,
                "citation_count": citation_count,
                "prompt_count": prompt_count,
                "engine_ids": engine_ids,
                "last_cited_at": last_cited_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        domain = d.pop("domain")

        platform = WarmLeadItemPlatform(d.pop("platform"))

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

        last_cited_at = datetime.datetime.fromisoformat(d.pop("last_cited_at"))

        warm_lead_item = cls(
            url=url,
            domain=domain,
            platform=platform,
            title=title,
            citation_count=citation_count,
            prompt_count=prompt_count,
            engine_ids=engine_ids,
            last_cited_at=last_cited_at,
        )

        return warm_lead_item
