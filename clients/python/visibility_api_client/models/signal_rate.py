from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SignalRate")


@_attrs_define
class SignalRate:
    """A mention rate of one period of a signal's slice: mentioned (the slice's counted runs that name the entity) / runs
    (the slice's counted runs). Defined in docs/metrics.md#signals.

        Attributes:
            rate (float):
            mentioned (int):
            runs (int):
    """

    rate: float
    mentioned: int
    runs: int

    def to_dict(self) -> dict[str, Any]:
        rate = self.rate

        mentioned = self.mentioned

        runs = self.runs

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "rate": rate,
                "mentioned": mentioned,
                "runs": runs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rate = d.pop("rate")

        mentioned = d.pop("mentioned")

        runs = d.pop("runs")

        signal_rate = cls(
            rate=rate,
            mentioned=mentioned,
            runs=runs,
        )

        return signal_rate
