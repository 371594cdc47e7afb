from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DimensionsDimensionPersona")


@_attrs_define
class DimensionsDimensionPersona:
    """
    Attributes:
        persona (str):
        run_count (int):
    """

    persona: str
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        persona = self.persona

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "persona": persona,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        persona = d.pop("persona")

        run_count = d.pop("run_count")

        dimensions_dimension_persona = cls(
            persona=persona,
            run_count=run_count,
        )

        return dimensions_dimension_persona
