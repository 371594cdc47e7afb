from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyFreshness")


@_attrs_define
class MethodologyFreshness:
    """How far behind the newest committed data a served body may be (docs/operations.md, "Bounded staleness").

    Attributes:
        max_staleness_ms (int): This service's bound in milliseconds (serve --max-staleness); 0: every body served is of
            the current data.
        definition (str): What the bound means for the numbers, and how to ask for the current data.
    """

    max_staleness_ms: int
    definition: str

    def to_dict(self) -> dict[str, Any]:
        max_staleness_ms = self.max_staleness_ms

        definition = self.definition

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_staleness_ms": max_staleness_ms,
                "definition": definition,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_staleness_ms = d.pop("max_staleness_ms")

        definition = d.pop("definition")

        methodology_freshness = cls(
            max_staleness_ms=max_staleness_ms,
            definition=definition,
        )

        return methodology_freshness
