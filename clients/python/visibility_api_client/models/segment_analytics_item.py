from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.comparison_period import ComparisonPeriod
    from ..models.confidence_interval import ConfidenceInterval
    from ..models.rate_change import RateChange


T = TypeVar("T", bound="SegmentAnalyticsItem")


@_attrs_define
class SegmentAnalyticsItem:
    """
    Attributes:
        segment_id (UUID):
        name (str):
        prompt_count (int):
        run_count (int):
        mention_rate (float):
        mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: runs
            mentioning the brand of n = the segment's run_count; null when n = 0. See docs/metrics.md.
        average_rank (float | None):
        sentiment (float | None):
        score (float | None):
        share_of_voice (float | None):
        share_of_voice_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of share_of_voice: runs
            mentioning the brand of n = runs mentioning the brand + for each tracked competitor the runs mentioning it among
            the segment's runs; null when n = 0 (share_of_voice null). See docs/metrics.md.
        mention_rate_change (RateChange | Unset): How a rate changed from the comparison period (compare=previous_period
            or compare_start_date..compare_end_date) to the current one, computed from the counts behind both rates (x of
            n), never from rounded rates. A row with no counterpart in the comparison period (n = 0 there) has previous,
            previous_ci, delta and delta_ci null and significant false. See docs/metrics.md#comparing-two-periods.
        share_of_voice_change (RateChange | Unset): How a rate changed from the comparison period
            (compare=previous_period or compare_start_date..compare_end_date) to the current one, computed from the counts
            behind both rates (x of n), never from rounded rates. A row with no counterpart in the comparison period (n = 0
            there) has previous, previous_ci, delta and delta_ci null and significant false. See docs/metrics.md#comparing-
            two-periods.
        comparison (ComparisonPeriod | None | Unset): The days the _change fields compare against (the same on every
            row: the body is a list); null when compare=previous_period and the request has no range to start from (no
            start_date/end_date and the project has no succeeded runs). Present only when the request compares (compare or
            compare_start_date/compare_end_date).
    """

    segment_id: UUID
    name: str
    prompt_count: int
    run_count: int
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    average_rank: float | None
    sentiment: float | None
    score: float | None
    share_of_voice: float | None
    share_of_voice_ci: ConfidenceInterval | None
    mention_rate_change: RateChange | Unset = UNSET
    share_of_voice_change: RateChange | Unset = UNSET
    comparison: ComparisonPeriod | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.comparison_period import ComparisonPeriod  # noqa: PLC0415
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        segment_id = str(self.segment_id)

        name = self.name

        prompt_count = self.prompt_count

        run_count = self.run_count

        mention_rate = self.mention_rate

        mention_rate_ci: dict[str, Any] | None
        if isinstance(self.mention_rate_ci, ConfidenceInterval):
            mention_rate_ci = self.mention_rate_ci.to_dict()
        else:
            mention_rate_ci = self.mention_rate_ci

        average_rank: float | None
        average_rank = self.average_rank

        sentiment: float | None
        sentiment = self.sentiment

        score: float | None
        score = self.score

        share_of_voice: float | None
        share_of_voice = self.share_of_voice

        share_of_voice_ci: dict[str, Any] | None
        if isinstance(self.share_of_voice_ci, ConfidenceInterval):
            share_of_voice_ci = self.share_of_voice_ci.to_dict()
        else:
            share_of_voice_ci = self.share_of_voice_ci

        mention_rate_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mention_rate_change, Unset):
            mention_rate_change = self.mention_rate_change.to_dict()

        share_of_voice_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.share_of_voice_change, Unset):
            share_of_voice_change = self.share_of_voice_change.to_dict()

        comparison: dict[str, Any] | None | Unset
        if isinstance(self.comparison, Unset):
            comparison = UNSET
        elif isinstance(self.comparison, ComparisonPeriod):
            comparison = self.comparison.to_dict()
        else:
            comparison = self.comparison

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "segment_id": segment_id,
                "name": name,
                "prompt_count": prompt_count,
                "run_count": run_count,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "average_rank": average_rank,
                "sentiment": sentiment,
                "score": score,
                "share_of_voice": share_of_voice,
                "share_of_voice_ci": share_of_voice_ci,
            }
        )
        if mention_rate_change is not UNSET:
            field_dict["mention_rate_change"] = mention_rate_change
        if share_of_voice_change is not UNSET:
            field_dict["share_of_voice_change"] = share_of_voice_change
        if comparison is not UNSET:
            field_dict["comparison"] = comparison

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.comparison_period import ComparisonPeriod  # noqa: PLC0415
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415
        from ..models.rate_change import RateChange  # noqa: PLC0415

        d = dict(src_dict)
        segment_id = UUID(d.pop("segment_id"))

        name = d.pop("name")

        prompt_count = d.pop("prompt_count")

        run_count = d.pop("run_count")

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

        def _parse_average_rank(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        average_rank = _parse_average_rank(d.pop("average_rank"))

        def _parse_sentiment(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        sentiment = _parse_sentiment(d.pop("sentiment"))

        def _parse_score(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        score = _parse_score(d.pop("score"))

        def _parse_share_of_voice(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        share_of_voice = _parse_share_of_voice(d.pop("share_of_voice"))

        def _parse_share_of_voice_ci(data: object) -> ConfidenceInterval | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                share_of_voice_ci_type_0 = ConfidenceInterval.from_dict(data)

                return share_of_voice_ci_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfidenceInterval | None, data)

        share_of_voice_ci = _parse_share_of_voice_ci(d.pop("share_of_voice_ci"))

        _mention_rate_change = d.pop("mention_rate_change", UNSET)
        mention_rate_change: RateChange | Unset
        if isinstance(_mention_rate_change, Unset):
            mention_rate_change = UNSET
        else:
            mention_rate_change = RateChange.from_dict(_mention_rate_change)

        _share_of_voice_change = d.pop("share_of_voice_change", UNSET)
        share_of_voice_change: RateChange | Unset
        if isinstance(_share_of_voice_change, Unset):
            share_of_voice_change = UNSET
        else:
            share_of_voice_change = RateChange.from_dict(_share_of_voice_change)

        def _parse_comparison(data: object) -> ComparisonPeriod | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                comparison_type_0 = ComparisonPeriod.from_dict(data)

                return comparison_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ComparisonPeriod | None | Unset, data)

        comparison = _parse_comparison(d.pop("comparison", UNSET))

        segment_analytics_item = cls(
            segment_id=segment_id,
            name=name,
            prompt_count=prompt_count,
            run_count=run_count,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            average_rank=average_rank,
            sentiment=sentiment,
            score=score,
            share_of_voice=share_of_voice,
            share_of_voice_ci=share_of_voice_ci,
            mention_rate_change=mention_rate_change,
            share_of_voice_change=share_of_voice_change,
            comparison=comparison,
        )

        return segment_analytics_item
