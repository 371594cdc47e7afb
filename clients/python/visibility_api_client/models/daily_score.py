from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.confidence_interval import ConfidenceInterval


T = TypeVar("T", bound="DailyScore")


@_attrs_define
class DailyScore:
    """
    Attributes:
        date (datetime.date):
        score (float):
        mention_rate (float):
        mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: runs
            mentioning the brand of n = the day's run_count; null when n = 0. See docs/metrics.md.
        average_rank (float | None):
        sentiment (float | None):
        share_of_voice (float | None):
        share_of_voice_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of share_of_voice: runs
            mentioning the brand of n = runs mentioning the brand + for each tracked competitor the runs mentioning it that
            day; null when n = 0 (share_of_voice null). See docs/metrics.md.
        prompt_count (int):
        run_count (int):
    """

    date: datetime.date
    score: float
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    average_rank: float | None
    sentiment: float | None
    share_of_voice: float | None
    share_of_voice_ci: ConfidenceInterval | None
    prompt_count: int
    run_count: int

    def to_dict(self) -> dict[str, Any]:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        date = self.date.isoformat()

        score = self.score

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

        share_of_voice: float | None
        share_of_voice = self.share_of_voice

        share_of_voice_ci: dict[str, Any] | None
        if isinstance(self.share_of_voice_ci, ConfidenceInterval):
            share_of_voice_ci = self.share_of_voice_ci.to_dict()
        else:
            share_of_voice_ci = self.share_of_voice_ci

        prompt_count = self.prompt_count

        run_count = self.run_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "date": date,
                "score": score,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "average_rank": average_rank,
                "sentiment": sentiment,
                "share_of_voice": share_of_voice,
                "share_of_voice_ci": share_of_voice_ci,
                "prompt_count": prompt_count,
                "run_count": run_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        d = dict(src_dict)
        date = datetime.date.fromisoformat(d.pop("date"))

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

        prompt_count = d.pop("prompt_count")

        run_count = d.pop("run_count")

        daily_score = cls(
            date=date,
            score=score,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            average_rank=average_rank,
            sentiment=sentiment,
            share_of_voice=share_of_voice,
            share_of_voice_ci=share_of_voice_ci,
            prompt_count=prompt_count,
            run_count=run_count,
        )

        return daily_score
