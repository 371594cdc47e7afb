from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SignalsSignalDeltaCi")


@_attrs_define
class SignalsSignalDeltaCi:
    """Newcombe's hybrid score 95 % interval of delta, built on the two Wilson intervals.

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

        signals_signal_delta_ci = cls(
            low=low,
            high=high,
        )

        return signals_signal_delta_ci
