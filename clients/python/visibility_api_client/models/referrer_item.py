from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

T = TypeVar("T", bound="ReferrerItem")


@_attrs_define
class ReferrerItem:
    """
    Attributes:
        domain (str):
        citation_count (int):
        url_count (int):
        share (float):
        engine_ids (list[UUID]):
        is_own_domain (bool):
        is_competitor_domain (bool):
    """

    domain: str
    citation_count: int
    url_count: int
    share: float
    engine_ids: list[UUID]
    is_own_domain: bool
    is_competitor_domain: bool

    def to_dict(self) -> dict[str, Any]:
        domain = self.domain

        citation_count = self.citation_count

        url_count = self.url_count

        share = self.share

        engine_ids = []
        for engine_ids_item_data in self.engine_ids:
            engine_ids_item = str(engine_ids_item_data)
            engine_ids.append(engine_ids_item)

        is_own_domain = self.is_own_domain

        is_competitor_domain = self.is_competitor_domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "domain": domain,
                "citation_count": citation_count,
                "url_count": url_count,
                "share": share,
                "engine_ids": engine_ids,
                "is_own_domain": is_own_domain,
                "is_competitor_domain": is_competitor_domain,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        domain = d.pop("domain")

        citation_count = d.pop("citation_count")

        url_count = d.pop("url_count")

        share = d.pop("share")

        engine_ids = []
        _engine_ids = d.pop("engine_ids")
        for engine_ids_item_data in _engine_ids:
            engine_ids_item = UUID(engine_ids_item_data)

            engine_ids.append(engine_ids_item)

        is_own_domain = d.pop("is_own_domain")

        is_competitor_domain = d.pop("is_competitor_domain")

        referrer_item = cls(
            domain=domain,
            citation_count=citation_count,
            url_count=url_count,
            share=share,
            engine_ids=engine_ids,
            is_own_domain=is_own_domain,
            is_competitor_domain=is_competitor_domain,
        )

        return referrer_item
