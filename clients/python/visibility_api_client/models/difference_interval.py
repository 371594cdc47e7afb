from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DifferenceInterval")


@_attrs_define
class DifferenceInterval:
    """Newcombe's hybrid score 95 % interval (z = 1.959964) of a difference of two rates, current - previous, built on the
    Wilson intervals of the two rates: low <= delta <= high, both in [-1, 1]. Defined in docs/metrics.md#comparing-two-
    periods.

        Attributes:
            low (float):
            high (float):
    """

    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        low = self.low

        high = self.high

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "low": low,
                "high": high,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        low = d.pop("low")

        high = d.pop("high")

        difference_interval = cls(
            low=low,
            high=high,
        )

        return difference_interval
