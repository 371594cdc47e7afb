from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ForumMetricsForumPlatformCountItem")


@_attrs_define
class ForumMetricsForumPlatformCountItem:
    """
    Attributes:
        platform (str):
        opportunities (int):
        leads (int):
    """

    platform: str
    opportunities: int
    leads: int

    def to_dict(self) -> dict[str, Any]:
        platform = self.platform

        opportunities = self.opportunities

        leads = self.leads

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "platform": platform,
                "opportunities": opportunities,
                "leads": leads,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        platform = d.pop("platform")

        opportunities = d.pop("opportunities")

        leads = d.pop("leads")

        forum_metrics_forum_platform_count_item = cls(
            platform=platform,
            opportunities=opportunities,
            leads=leads,
        )

        return forum_metrics_forum_platform_count_item
