from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.forum_metrics_forum_platform_count_item import ForumMetricsForumPlatformCountItem


T = TypeVar("T", bound="ForumMetrics")


@_attrs_define
class ForumMetrics:
    """Forum opportunity summary of the project.

    Attributes:
        total_opportunities (int):
        open_opportunities (int):
        lead_count (int):
        engaged_count (int):
        dismissed_count (int):
        average_relevance (float | None):
        last_discovered_at (datetime.datetime | None):
        by_platform (list[ForumMetricsForumPlatformCountItem]):
    """

    total_opportunities: int
    open_opportunities: int
    lead_count: int
    engaged_count: int
    dismissed_count: int
    average_relevance: float | None
    last_discovered_at: datetime.datetime | None
    by_platform: list[ForumMetricsForumPlatformCountItem]

    def to_dict(self) -> dict[str, Any]:
        total_opportunities = self.total_opportunities

        open_opportunities = self.open_opportunities

        lead_count = self.lead_count

        engaged_count = self.engaged_count

        dismissed_count = self.dismissed_count

        average_relevance: float | None
        average_relevance = self.average_relevance

        last_discovered_at: None | str
        if isinstance(self.last_discovered_at, datetime.datetime):
            last_discovered_at = self.last_discovered_at.isoformat()
        else:
            last_discovered_at = self.last_discovered_at

        by_platform = []
        for by_platform_item_data in self.by_platform:
            by_platform_item = by_platform_item_data.to_dict()
            by_platform.append(by_platform_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "total_opportunities": total_opportunities,
                "open_opportunities": open_opportunities,
                "lead_count": lead_count,
                "engaged_count": engaged_count,
                "dismissed_count": dismissed_count,
                "average_relevance": average_relevance,
                "last_discovered_at": last_discovered_at,
                "by_platform": by_platform,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.forum_metrics_forum_platform_count_item import ForumMetricsForumPlatformCountItem  # noqa: PLC0415

        d = dict(src_dict)
        total_opportunities = d.pop("total_opportunities")

        open_opportunities = d.pop("open_opportunities")

        lead_count = d.pop("lead_count")

        engaged_count = d.pop("engaged_count")

        dismissed_count = d.pop("dismissed_count")

        def _parse_average_relevance(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        average_relevance = _parse_average_relevance(d.pop("average_relevance"))

        def _parse_last_discovered_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_discovered_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_discovered_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_discovered_at = _parse_last_discovered_at(d.pop("last_discovered_at"))

        by_platform = []
        _by_platform = d.pop("by_platform")
        for by_platform_item_data in _by_platform:
            by_platform_item = ForumMetricsForumPlatformCountItem.from_dict(by_platform_item_data)

            by_platform.append(by_platform_item)

        forum_metrics = cls(
            total_opportunities=total_opportunities,
            open_opportunities=open_opportunities,
            lead_count=lead_count,
            engaged_count=engaged_count,
            dismissed_count=dismissed_count,
            average_relevance=average_relevance,
            last_discovered_at=last_discovered_at,
            by_platform=by_platform,
        )

        return forum_metrics
