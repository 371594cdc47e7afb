from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.confidence_interval import ConfidenceInterval
    from ..models.rate_change import RateChange


T = TypeVar("T", bound="VisibilityReportPromptBreakdown")


@_attrs_define
class VisibilityReportPromptBreakdown:
    """
    Attributes:
        prompt_id (UUID):
        text (str):
        run_count (int):
        mention_rate (float):
        mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: runs
            mentioning the brand of n = this entry's run_count; null when n = 0. See docs/metrics.md.
        average_rank (float | None):
        sentiment (float | None):
        score (float):
        mention_rate_change (RateChange | Unset): How a rate changed from the comparison period (compare=previous_period
            or compare_start_date..compare_end_date) to the current one, computed from the counts behind both rates (x of
            n), never from rounded rates. A row with no counterpart in the comparison period (n = 0 there) has previous,
            previous_ci, delta and delta_ci null and significant false. See docs/metrics.md#comparing-two-periods.
    """

    prompt_id: UUID
    text: str
    run_count: int
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    average_rank: float | None
    sentiment: float | None
    score: float
    mention_rate_change: RateChange | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        prompt_id = str(self.prompt_id)

        text = self.text

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

        score = self.score

        mention_rate_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mention_rate_change, Unset):
            mention_rate_change = self.mention_rate_change.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "prompt_id": prompt_id,
                "text": text,
                "run_count": run_count,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "average_rank": average_rank,
                "sentiment": sentiment,
                "score": score,
            }
        )
        if mention_rate_change is not UNSET:
            field_dict["mention_rate_change"] = mention_rate_change

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415
        from ..models.rate_change import RateChange  # noqa: PLC0415

        d = dict(src_dict)
        prompt_id = UUID(d.pop("prompt_id"))

        text = d.pop("text")

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

        score = d.pop("score")

        _mention_rate_change = d.pop("mention_rate_change", UNSET)
        mention_rate_change: RateChange | Unset
        if isinstance(_mention_rate_change, Unset):
            mention_rate_change = UNSET
        else:
            mention_rate_change = RateChange.from_dict(_mention_rate_change)

        visibility_report_prompt_breakdown = cls(
            prompt_id=prompt_id,
            text=text,
            run_count=run_count,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            average_rank=average_rank,
            sentiment=sentiment,
            score=score,
            mention_rate_change=mention_rate_change,
        )

        return visibility_report_prompt_breakdown
