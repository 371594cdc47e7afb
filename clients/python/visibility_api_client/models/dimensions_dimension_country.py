from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DimensionsDimensionCountry")


@_attrs_define
class DimensionsDimensionCountry:
    """
    Attributes:
        country (str):
        run_count (int):
    """

    country: str
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        country = self.country

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "country": country,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        country = d.pop("country")

        run_count = d.pop("run_count")

        dimensions_dimension_country = cls(
            country=country,
            run_count=run_count,
        )

        return dimensions_dimension_country
