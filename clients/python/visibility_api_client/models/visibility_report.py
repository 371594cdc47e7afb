from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.comparison_period import ComparisonPeriod
    from ..models.confidence_interval import ConfidenceInterval
    from ..models.rate_change import RateChange
    from ..models.visibility_report_engine_breakdown import VisibilityReportEngineBreakdown
    from ..models.visibility_report_prompt_breakdown import VisibilityReportPromptBreakdown
    from ..models.visibility_report_top_competitor import VisibilityReportTopCompetitor
    from ..models.visibility_report_visibility_group import VisibilityReportVisibilityGroup


T = TypeVar("T", bound="VisibilityReport")


@_attrs_define
class VisibilityReport:
    """Visibility of the brand over the current window (7 UTC days ending with the day of the latest succeeded run),
    optionally for some engines only.

        Attributes:
            project_id (UUID):
            window_start (datetime.date | None):
            window_end (datetime.date | None):
            current_score (float | None):
            mention_rate (float):
            mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: runs
                mentioning the brand of n = run_count; null when n = 0. See docs/metrics.md.
            average_rank (float | None):
            sentiment (float | None):
            share_of_voice (float | None):
            share_of_voice_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of share_of_voice: runs
                mentioning the brand of n = runs mentioning the brand + for each tracked competitor the runs mentioning it in
                the window; null when n = 0 (share_of_voice null). See docs/metrics.md.
            prompt_count (int):
            run_count (int):
            top_competitors (list[VisibilityReportTopCompetitor]): At most 10 tracked competitors, by mention_rate desc,
                then name, then id.
            prompt_breakdown (list[VisibilityReportPromptBreakdown]):
            engine_breakdown (list[VisibilityReportEngineBreakdown]):
            comparison (ComparisonPeriod | None | Unset): The days the _change fields compare against; null when
                compare=previous_period and the request has no range to start from (no start_date/end_date and the project has
                no succeeded runs). Present only when the request compares (compare or compare_start_date/compare_end_date).
            mention_rate_change (RateChange | Unset): How a rate changed from the comparison period (compare=previous_period
                or compare_start_date..compare_end_date) to the current one, computed from the counts behind both rates (x of
                n), never from rounded rates. A row with no counterpart in the comparison period (n = 0 there) has previous,
                previous_ci, delta and delta_ci null and significant false. See docs/metrics.md#comparing-two-periods.
            share_of_voice_change (RateChange | Unset): How a rate changed from the comparison period
                (compare=previous_period or compare_start_date..compare_end_date) to the current one, computed from the counts
                behind both rates (x of n), never from rounded rates. A row with no counterpart in the comparison period (n = 0
                there) has previous, previous_ci, delta and delta_ci null and significant false. See docs/metrics.md#comparing-
                two-periods.
            groups (list[VisibilityReportVisibilityGroup] | Unset): Present only with group_by: the brand's figures per
                group of the keys asked for (only those keys appear in a row), ordered by them in the order given (names, then
                ids; periods oldest first; null last). A run without the dimension is in the group whose key is null; a prompt
                in two segments counts in both. See docs/metrics.md#breakdowns.
    """

    project_id: UUID
    window_start: datetime.date | None
    window_end: datetime.date | None
    current_score: float | None
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    average_rank: float | None
    sentiment: float | None
    share_of_voice: float | None
    share_of_voice_ci: ConfidenceInterval | None
    prompt_count: int
    run_count: int
    top_competitors: list[VisibilityReportTopCompetitor]
    prompt_breakdown: list[VisibilityReportPromptBreakdown]
    engine_breakdown: list[VisibilityReportEngineBreakdown]
    comparison: ComparisonPeriod | None | Unset = UNSET
    mention_rate_change: RateChange | Unset = UNSET
    share_of_voice_change: RateChange | Unset = UNSET
    groups: list[VisibilityReportVisibilityGroup] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.comparison_period import ComparisonPeriod  # noqa: PLC0415
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        project_id = str(self.project_id)

        window_start: None | str
        if isinstance(self.window_start, datetime.date):
            window_start = self.window_start.isoformat()
        else:
            window_start = self.window_start

        window_end: None | str
        if isinstance(self.window_end, datetime.date):
            window_end = self.window_end.isoformat()
        else:
            window_end = self.window_end

        current_score: float | None
        current_score = self.current_score

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

        top_competitors = []
        for top_competitors_item_data in self.top_competitors:
            top_competitors_item = top_competitors_item_data.to_dict()
            top_competitors.append(top_competitors_item)

        prompt_breakdown = []
        for prompt_breakdown_item_data in self.prompt_breakdown:
            prompt_breakdown_item = prompt_breakdown_item_data.to_dict()
            prompt_breakdown.append(prompt_breakdown_item)

        engine_breakdown = []
        for engine_breakdown_item_data in self.engine_breakdown:
            engine_breakdown_item = engine_breakdown_item_data.to_dict()
            engine_breakdown.append(engine_breakdown_item)

        comparison: dict[str, Any] | None | Unset
        if isinstance(self.comparison, Unset):
            comparison = UNSET
        elif isinstance(self.comparison, ComparisonPeriod):
            comparison = self.comparison.to_dict()
        else:
            comparison = self.comparison

        mention_rate_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mention_rate_change, Unset):
            mention_rate_change = self.mention_rate_change.to_dict()

        share_of_voice_change: dict[str, Any] | Unset = UNSET
        if not isinstance(self.share_of_voice_change, Unset):
            share_of_voice_change = self.share_of_voice_change.to_dict()

        groups: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.groups, Unset):
            groups = []
            for groups_item_data in self.groups:
                groups_item = groups_item_data.to_dict()
                groups.append(groups_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "project_id": project_id,
                "window_start": window_start,
                "window_end": window_end,
                "current_score": current_score,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "average_rank": average_rank,
                "sentiment": sentiment,
                "share_of_voice": share_of_voice,
                "share_of_voice_ci": share_of_voice_ci,
                "prompt_count": prompt_count,
                "run_count": run_count,
                "top_competitors": top_competitors,
                "prompt_breakdown": prompt_breakdown,
                "engine_breakdown": engine_breakdown,
            }
        )
        if comparison is not UNSET:
            field_dict["comparison"] = comparison
        if mention_rate_change is not UNSET:
            field_dict["mention_rate_change"] = mention_rate_change
        if share_of_voice_change is not UNSET:
            field_dict["share_of_voice_change"] = share_of_voice_change
        if groups is not UNSET:
            field_dict["groups"] = groups

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.comparison_period import ComparisonPeriod  # noqa: PLC0415
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415
        from ..models.rate_change import RateChange  # noqa: PLC0415
        from ..models.visibility_report_engine_breakdown import VisibilityReportEngineBreakdown  # noqa: PLC0415
        from ..models.visibility_report_prompt_breakdown import VisibilityReportPromptBreakdown  # noqa: PLC0415
        from ..models.visibility_report_top_competitor import VisibilityReportTopCompetitor  # noqa: PLC0415
        from ..models.visibility_report_visibility_group import VisibilityReportVisibilityGroup  # noqa: PLC0415

        d = dict(src_dict)
        project_id = UUID(d.pop("project_id"))

        def _parse_window_start(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                window_start_type_0 = datetime.date.fromisoformat(data)

                return window_start_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        window_start = _parse_window_start(d.pop("window_start"))

        def _parse_window_end(data: object) -> datetime.date | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                window_end_type_0 = datetime.date.fromisoformat(data)

                return window_end_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None, data)

        window_end = _parse_window_end(d.pop("window_end"))

        def _parse_current_score(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        current_score = _parse_current_score(d.pop("current_score"))

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

        top_competitors = []
        _top_competitors = d.pop("top_competitors")
        for top_competitors_item_data in _top_competitors:
            top_competitors_item = VisibilityReportTopCompetitor.from_dict(top_competitors_item_data)

            top_competitors.append(top_competitors_item)

        prompt_breakdown = []
        _prompt_breakdown = d.pop("prompt_breakdown")
        for prompt_breakdown_item_data in _prompt_breakdown:
            prompt_breakdown_item = VisibilityReportPromptBreakdown.from_dict(prompt_breakdown_item_data)

            prompt_breakdown.append(prompt_breakdown_item)

        engine_breakdown = []
        _engine_breakdown = d.pop("engine_breakdown")
        for engine_breakdown_item_data in _engine_breakdown:
            engine_breakdown_item = VisibilityReportEngineBreakdown.from_dict(engine_breakdown_item_data)

            engine_breakdown.append(engine_breakdown_item)

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

        _groups = d.pop("groups", UNSET)
        groups: list[VisibilityReportVisibilityGroup] | Unset = UNSET
        if _groups is not UNSET:
            groups = []
            for groups_item_data in _groups:
                groups_item = VisibilityReportVisibilityGroup.from_dict(groups_item_data)

                groups.append(groups_item)

        visibility_report = cls(
            project_id=project_id,
            window_start=window_start,
            window_end=window_end,
            current_score=current_score,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            average_rank=average_rank,
            sentiment=sentiment,
            share_of_voice=share_of_voice,
            share_of_voice_ci=share_of_voice_ci,
            prompt_count=prompt_count,
            run_count=run_count,
            top_competitors=top_competitors,
            prompt_breakdown=prompt_breakdown,
            engine_breakdown=engine_breakdown,
            comparison=comparison,
            mention_rate_change=mention_rate_change,
            share_of_voice_change=share_of_voice_change,
            groups=groups,
        )

        return visibility_report
