from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.dimensions_dimension_surface_surface import DimensionsDimensionSurfaceSurface

T = TypeVar("T", bound="DimensionsDimensionSurface")


@_attrs_define
class DimensionsDimensionSurface:
    """
    Attributes:
        surface (DimensionsDimensionSurfaceSurface):
        run_count (int):
    """

    surface: DimensionsDimensionSurfaceSurface
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        surface = self.surface.value

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "surface": surface,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        surface = DimensionsDimensionSurfaceSurface(d.pop("surface"))

        run_count = d.pop("run_count")

        dimensions_dimension_surface = cls(
            surface=surface,
            run_count=run_count,
        )

        return dimensions_dimension_surface
