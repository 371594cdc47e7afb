from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.confidence_interval import ConfidenceInterval


T = TypeVar("T", bound="TimeseriesPointTimeseriesEngine")


@_attrs_define
class TimeseriesPointTimeseriesEngine:
    """
    Attributes:
        engine_id (UUID):
        score (float):
        mention_rate (float):
        mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: runs
            mentioning the brand of n = the engine's run_count that day; null when n = 0. See docs/metrics.md.
        run_count (int):
    """

    engine_id: UUID
    score: float
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        engine_id = str(self.engine_id)

        score = self.score

        mention_rate = self.mention_rate

        mention_rate_ci: dict[str, Any] | None
        if isinstance(self.mention_rate_ci, ConfidenceInterval):
            mention_rate_ci = self.mention_rate_ci.to_dict()
        else:
            mention_rate_ci = self.mention_rate_ci

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "engine_id": engine_id,
                "score": score,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        d = dict(src_dict)
        engine_id = UUID(d.pop("engine_id"))

        score = d.pop("score")

        mention_rate = d.pop("mention_rate")

        def _parse_mention_rate_ci(data: object) -> ConfidenceInterval | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mention_rate_ci_type_0 = ConfidenceInterval.from_dict(data)

                return mention_rate_ci_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfidenceInterval | None, data)

        mention_rate_ci = _parse_mention_rate_ci(d.pop("mention_rate_ci"))

        run_count = d.pop("run_count")

        timeseries_point_timeseries_engine = cls(
            engine_id=engine_id,
            score=score,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            run_count=run_count,
        )

        return timeseries_point_timeseries_engine
