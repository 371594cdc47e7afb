from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyIntervalsIntervalCounts")


@_attrs_define
class MethodologyIntervalsIntervalCounts:
    """
    Attributes:
        field (str):
        k (str):
        n (str):
    """

    field: str
    k: str
    n: str

    def to_dict(self) -> dict[str, Any]:
        field = self.field

        k = self.k

        n = self.n

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "field": field,
                "k": k,
                "n": n,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field")

        k = d.pop("k")

        n = d.pop("n")

        methodology_intervals_interval_counts = cls(
            field=field,
            k=k,
            n=n,
        )

        return methodology_intervals_interval_counts
