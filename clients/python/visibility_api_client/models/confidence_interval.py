from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConfidenceInterval")


@_attrs_define
class ConfidenceInterval:
    """Wilson score 95 % confidence interval of a rate (z = 1.959964), computed from the counts behind the rate: low <=
    rate <= high. Defined in docs/metrics.md.

        Attributes:
            low (float): Lower bound: 0 exactly when the count is 0.
            high (float): Upper bound: 1 exactly when the count equals n.
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

        confidence_interval = cls(
            low=low,
            high=high,
        )

        return confidence_interval
