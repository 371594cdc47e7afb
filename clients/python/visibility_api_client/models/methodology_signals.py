from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologySignals")


@_attrs_define
class MethodologySignals:
    """How /signals decides which changes between two periods are real (docs/metrics.md, Signals).

    Attributes:
        endpoint (str):
        metric (str):
        slices (str):
        tested_when (str):
        test (str):
        interval (str):
        q_value (str):
        signal_when (str):
        ordering (str):
        multiple_testing (Literal['benjamini-hochberg']):
        min_runs (int):
        false_discovery_rate (float):
    """

    endpoint: str
    metric: str
    slices: str
    tested_when: str
    test: str
    interval: str
    q_value: str
    signal_when: str
    ordering: str
    multiple_testing: Literal["benjamini-hochberg"]
    min_runs: int
    false_discovery_rate: float

    def to_dict(self) -> dict[str, Any]:
        endpoint = self.endpoint

        metric = self.metric

        slices = self.slices

        tested_when = self.tested_when

        test = self.test

        interval = self.interval

        q_value = self.q_value

        signal_when = self.signal_when

        ordering = self.ordering

        multiple_testing = self.multiple_testing

        min_runs = self.min_runs

        false_discovery_rate = self.false_discovery_rate

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "endpoint": endpoint,
                "metric": metric,
                "slices": slices,
                "tested_when": tested_when,
                "test": test,
                "interval": interval,
                "q_value": q_value,
                "signal_when": signal_when,
                "ordering": ordering,
                "multiple_testing": multiple_testing,
                "min_runs": min_runs,
                "false_discovery_rate": false_discovery_rate,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint = d.pop("endpoint")

        metric = d.pop("metric")

        slices = d.pop("slices")

        tested_when = d.pop("tested_when")

        test = d.pop("test")

        interval = d.pop("interval")

        q_value = d.pop("q_value")

        signal_when = d.pop("signal_when")

        ordering = d.pop("ordering")

        multiple_testing = cast(Literal["benjamini-hochberg"], d.pop("multiple_testing"))
        if multiple_testing != "benjamini-hochberg":
            raise ValueError(f"multiple_testing must match const 'benjamini-hochberg', got '{multiple_testing}'")

        min_runs = d.pop("min_runs")

        false_discovery_rate = d.pop("false_discovery_rate")

        methodology_signals = cls(
            endpoint=endpoint,
            metric=metric,
            slices=slices,
            tested_when=tested_when,
            test=test,
            interval=interval,
            q_value=q_value,
            signal_when=signal_when,
            ordering=ordering,
            multiple_testing=multiple_testing,
            min_runs=min_runs,
            false_discovery_rate=false_discovery_rate,
        )

        return methodology_signals
