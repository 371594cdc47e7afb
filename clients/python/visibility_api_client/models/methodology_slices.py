from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologySlices")


@_attrs_define
class MethodologySlices:
    """The dimensions of a run, the filters on them and the breakdowns (docs/metrics.md, Filters and Breakdowns).

    Attributes:
        dimensions (str):
        combining (str):
        group_by (str):
        exact (str):
        filters (list[str]):
        filter_endpoints (list[str]):
    """

    dimensions: str
    combining: str
    group_by: str
    exact: str
    filters: list[str]
    filter_endpoints: list[str]

    def to_dict(self) -> dict[str, Any]:
        dimensions = self.dimensions

        combining = self.combining

        group_by = self.group_by

        exact = self.exact

        filters = self.filters

        filter_endpoints = self.filter_endpoints

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "dimensions": dimensions,
                "combining": combining,
                "group_by": group_by,
                "exact": exact,
                "filters": filters,
                "filter_endpoints": filter_endpoints,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dimensions = d.pop("dimensions")

        combining = d.pop("combining")

        group_by = d.pop("group_by")

        exact = d.pop("exact")

        filters = cast(list[str], d.pop("filters"))

        filter_endpoints = cast(list[str], d.pop("filter_endpoints"))

        methodology_slices = cls(
            dimensions=dimensions,
            combining=combining,
            group_by=group_by,
            exact=exact,
            filters=filters,
            filter_endpoints=filter_endpoints,
        )

        return methodology_slices
