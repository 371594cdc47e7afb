from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="RunResultsItemCitationsItem")


@_attrs_define
class RunResultsItemCitationsItem:
    """
    Attributes:
        url (str):
        domain (str):
        title (None | str):
        position (int | None):
    """

    url: str
    domain: str
    title: None | str
    position: int | None

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        domain = self.domain

        title: None | str
        title = self.title

        position: int | None
        position = self.position

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "domain": domain,
                "title": title,
                "position": position,
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

        def _parse_position(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        position = _parse_position(d.pop("position"))

        run_results_item_citations_item = cls(
            url=url,
            domain=domain,
            title=title,
            position=position,
        )

        return run_results_item_citations_item
