from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DimensionsDimensionModel")


@_attrs_define
class DimensionsDimensionModel:
    """
    Attributes:
        model (str):
        run_count (int):
    """

    model: str
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        model = self.model

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "model": model,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        model = d.pop("model")

        run_count = d.pop("run_count")

        dimensions_dimension_model = cls(
            model=model,
            run_count=run_count,
        )

        return dimensions_dimension_model
