from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.forum_opportunity_item_intent import ForumOpportunityItemIntent
from ..models.forum_opportunity_item_status import ForumOpportunityItemStatus

T = TypeVar("T", bound="ForumOpportunityItem")


@_attrs_define
class ForumOpportunityItem:
    """
    Attributes:
        id (UUID):
        platform (str):
        url (str):
        title (str):
        community (None | str):
        author (None | str):
        posted_at (datetime.datetime | None):
        discovered_at (datetime.datetime):
        relevance (float):
        intent (ForumOpportunityItemIntent):
        is_lead (bool):
        status (ForumOpportunityItemStatus):
        matched_terms (list[str]):
        comment_count (int | None):
        score (int | None):
    """

    id: UUID
    platform: str
    url: str
    title: str
    community: None | str
    author: None | str
    posted_at: datetime.datetime | None
    discovered_at: datetime.datetime
    relevance: float
    intent: ForumOpportunityItemIntent
    is_lead: bool
    status: ForumOpportunityItemStatus
    matched_terms: list[str]
    comment_count: int | None
    score: int | None

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        platform = self.platform

        url = self.url

        title = self.title

        community: None | str
        community = self.community

        author: None | str
        author = self.author

        posted_at: None | str
        if isinstance(self.posted_at, datetime.datetime):
            posted_at = self.posted_at.isoformat()
        else:
            posted_at = self.posted_at

        discovered_at = self.discovered_at.isoformat()

        relevance = self.relevance

        intent = self.intent.value

        is_lead = self.is_lead

        status = self.status.value

        matched_terms = self.matched_terms

        comment_count: int | None
        comment_count = self.comment_count

        score: int | None
        score = self.score

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "platform": platform,
                "url": url,
                "title": title,
                "community": community,
                "author": author,
                "posted_at": posted_at,
                "discovered_at": discovered_at,
                "relevance": relevance,
                "intent": intent,
                "is_lead": is_lead,
                "status": status,
                "matched_terms": matched_terms,
                "comment_count": comment_count,
                "score": score,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        platform = d.pop("platform")

        url = d.pop("url")

        title = d.pop("title")

        def _parse_community(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        community = _parse_community(d.pop("community"))

        def _parse_author(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        author = _parse_author(d.pop("author"))

        def _parse_posted_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                posted_at_type_0 = datetime.datetime.fromisoformat(data)

                return posted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        posted_at = _parse_posted_at(d.pop("posted_at"))

        discovered_at = datetime.datetime.fromisoformat(d.pop("discovered_at"))

        relevance = d.pop("relevance")

        intent = ForumOpportunityItemIntent(d.pop("intent"))

        is_lead = d.pop("is_lead")

        status = ForumOpportunityItemStatus(d.pop("status"))

        matched_terms = cast(list[str], d.pop("matched_terms"))

        def _parse_comment_count(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        comment_count = _parse_comment_count(d.pop("comment_count"))

        def _parse_score(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        score = _parse_score(d.pop("score"))

        forum_opportunity_item = cls(
            id=id,
            platform=platform,
            url=url,
            title=title,
            community=community,
            author=author,
            posted_at=posted_at,
            discovered_at=discovered_at,
            relevance=relevance,
            intent=intent,
            is_lead=is_lead,
            status=status,
            matched_terms=matched_terms,
            comment_count=comment_count,
            score=score,
        )

        return forum_opportunity_item
