from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.signals_signal import SignalsSignal


T = TypeVar("T", bound="Signals")


@_attrs_define
class Signals:
    """The changes of mention rate between two periods that are statistically real, across the project's slices (the brand
    and each tracked competitor x each engine or all x each segment or all x each country or all). Each slice with at
    least 10 counted runs in both periods is tested (two-sided pooled two-proportion z-test); q-values are Benjamini-
    Hochberg adjusted across all tested slices; a signal is a tested slice with q_value <= false_discovery_rate. Ranked
    by |delta| descending, then entity (brand first), name, competitor id, engine, segment and country (all before
    each). Defined in docs/metrics.md#signals.

        Attributes:
            project_id (UUID):
            start_date (datetime.date | None): First day of the current period; null (with every date) when the request
                names no range and the project has no succeeded runs.
            end_date (datetime.date | None):
            compare_start_date (datetime.date | None): First day of the period compared with.
            compare_end_date (datetime.date | None):
            min_runs (int): The counted runs a slice needs in each period to be tested.
            slices_tested (int): Slices tested: the m of the Benjamini-Hochberg adjustment (all of them, however many
                signals the limit lists).
            slices_skipped (int): Slices with counted runs in either period but fewer than min_runs in one of them: not
                tested.
            false_discovery_rate (float): The rate the false discovery rate is controlled at: a signal has q_value <= this.
            signals (list[SignalsSignal]):
    """

    project_id: UUID
    start_date: datetime.date | None
    end_date: datetime.date | None
    compare_start_date: datetime.date | None
    compare_end_date: datetime.date | None
    min_runs: int
    slices_tested: int
    slices_skipped: int
    false_discovery_rate: float
    signals: list[SignalsSignal]

    def to_dict(self) -> dict[str, Any]:
        project_id = str(self.project_id)

        start_date: None | str
        if isinstance(self.start_date, datetime.date):
            start_date = self.start_date.isoformat()
        else:
            start_date = self.start_date

        end_date: None | str
        if isinstance(self.end_date, datetime.date):
            end_date = self.end_date.isoformat()
        else:
            end_date = self.end_date

        compare_start_date: None | str
        if isinstance(self.compare_start_date, datetime.date):
            compare_start_date = self.compare_start_date.isoformat()
        else:
            compare_start_date = self.compare_start_date

        compare_end_date: None | str
        if isinstance(self.compare_end_date, datetime.date):
            compare_end_date = self.compare_end_date.isoformat()
        else:
            compare_end_date = self.compare_end_date

        min_runs = self.min_runs

        slices_tested = self.slices_tested

        slices_skipped = self.slices_skipped

        false_discovery_rate = self.false_discovery_rate

        signals = []
        for signals_item_data in self.signals:
            signals_item = signals_item_data.to_dict()
            signals.append(signals_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "project_id": project_id,
                "start_date": start_date,
                "end_date": end_date,
                "compare_start_date": compare_start_date,
                "compare_end_date": compare_end_date,
                "min_runs": min_runs,
                "slices_tested": slices_tested,
                "slices_skipped": slices_skipped,
                "false_discovery_rate": false_discovery_rate,
                "signals": signals,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.signals_signal import SignalsSignal  # noqa: PLC0415

        d = dict(src_dict)
        project_id = UUID(d.pop("project_id"))

        def _parse_start_date(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                start_date_type_0 = datetime.date.fromisoformat(data)

                return start_date_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        start_date = _parse_start_date(d.pop("start_date"))

        def _parse_end_date(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                end_date_type_0 = datetime.date.fromisoformat(data)

                return end_date_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        end_date = _parse_end_date(d.pop("end_date"))

        def _parse_compare_start_date(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                compare_start_date_type_0 = datetime.date.fromisoformat(data)

                return compare_start_date_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        compare_start_date = _parse_compare_start_date(d.pop("compare_start_date"))

        def _parse_compare_end_date(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                compare_end_date_type_0 = datetime.date.fromisoformat(data)

                return compare_end_date_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        compare_end_date = _parse_compare_end_date(d.pop("compare_end_date"))

        min_runs = d.pop("min_runs")

        slices_tested = d.pop("slices_tested")

        slices_skipped = d.pop("slices_skipped")

        false_discovery_rate = d.pop("false_discovery_rate")

        signals = []
        _signals = d.pop("signals")
        for signals_item_data in _signals:
            signals_item = SignalsSignal.from_dict(signals_item_data)

            signals.append(signals_item)

        signals = cls(
            project_id=project_id,
            start_date=start_date,
            end_date=end_date,
            compare_start_date=compare_start_date,
            compare_end_date=compare_end_date,
            min_runs=min_runs,
            slices_tested=slices_tested,
            slices_skipped=slices_skipped,
            false_discovery_rate=false_discovery_rate,
            signals=signals,
        )

        return signals
