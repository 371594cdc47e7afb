from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.confidence_interval import ConfidenceInterval


T = TypeVar("T", bound="VisibilityReportVisibilityGroup")


@_attrs_define
class VisibilityReportVisibilityGroup:
    """
    Attributes:
        run_count (int):
        mention_count (int): Runs of the group mentioning the brand: mention_rate's numerator.
        mention_rate (float):
        mention_rate_ci (ConfidenceInterval | None): Wilson 95 % interval (z = 1.959964) of mention_rate: mention_count
            of n = run_count. See docs/metrics.md.
        average_rank (float | None):
        sentiment (float | None):
        score (float):
        engine_id (None | Unset | UUID):
        engine_name (None | str | Unset):
        prompt_id (None | Unset | UUID):
        prompt_text (None | str | Unset):
        segment_id (None | Unset | UUID):
        segment_name (None | str | Unset):
        country (None | str | Unset):
        persona (None | str | Unset):
        model (None | str | Unset):
        period (datetime.date | Unset): The first day of the group's day, ISO week (Monday) or month.
    """

    run_count: int
    mention_count: int
    mention_rate: float
    mention_rate_ci: ConfidenceInterval | None
    average_rank: float | None
    sentiment: float | None
    score: float
    engine_id: None | Unset | UUID = UNSET
    engine_name: None | str | Unset = UNSET
    prompt_id: None | Unset | UUID = UNSET
    prompt_text: None | str | Unset = UNSET
    segment_id: None | Unset | UUID = UNSET
    segment_name: None | str | Unset = UNSET
    country: None | str | Unset = UNSET
    persona: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    period: datetime.date | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        run_count = self.run_count

        mention_count = self.mention_count

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

        engine_id: None | str | Unset
        if isinstance(self.engine_id, Unset):
            engine_id = UNSET
        elif isinstance(self.engine_id, UUID):
            engine_id = str(self.engine_id)
        else:
            engine_id = self.engine_id

        engine_name: None | str | Unset
        if isinstance(self.engine_name, Unset):
            engine_name = UNSET
        else:
            engine_name = self.engine_name

        prompt_id: None | str | Unset
        if isinstance(self.prompt_id, Unset):
            prompt_id = UNSET
        elif isinstance(self.prompt_id, UUID):
            prompt_id = str(self.prompt_id)
        else:
            prompt_id = self.prompt_id

        prompt_text: None | str | Unset
        if isinstance(self.prompt_text, Unset):
            prompt_text = UNSET
        else:
            prompt_text = self.prompt_text

        segment_id: None | str | Unset
        if isinstance(self.segment_id, Unset):
            segment_id = UNSET
        elif isinstance(self.segment_id, UUID):
            segment_id = str(self.segment_id)
        else:
            segment_id = self.segment_id

        segment_name: None | str | Unset
        if isinstance(self.segment_name, Unset):
            segment_name = UNSET
        else:
            segment_name = self.segment_name

        country: None | str | Unset
        if isinstance(self.country, Unset):
            country = UNSET
        else:
            country = self.country

        persona: None | str | Unset
        if isinstance(self.persona, Unset):
            persona = UNSET
        else:
            persona = self.persona

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        period: str | Unset = UNSET
        if not isinstance(self.period, Unset):
            period = self.period.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "run_count": run_count,
                "mention_count": mention_count,
                "mention_rate": mention_rate,
                "mention_rate_ci": mention_rate_ci,
                "average_rank": average_rank,
                "sentiment": sentiment,
                "score": score,
            }
        )
        if engine_id is not UNSET:
            field_dict["engine_id"] = engine_id
        if engine_name is not UNSET:
            field_dict["engine_name"] = engine_name
        if prompt_id is not UNSET:
            field_dict["prompt_id"] = prompt_id
        if prompt_text is not UNSET:
            field_dict["prompt_text"] = prompt_text
        if segment_id is not UNSET:
            field_dict["segment_id"] = segment_id
        if segment_name is not UNSET:
            field_dict["segment_name"] = segment_name
        if country is not UNSET:
            field_dict["country"] = country
        if persona is not UNSET:
            field_dict["persona"] = persona
        if model is not UNSET:
            field_dict["model"] = model
        if period is not UNSET:
            field_dict["period"] = period

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415

        d = dict(src_dict)
        run_count = d.pop("run_count")

        mention_count = d.pop("mention_count")

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

        def _parse_engine_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                engine_id_type_0 = UUID(data)

                return engine_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        engine_id = _parse_engine_id(d.pop("engine_id", UNSET))

        def _parse_engine_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        engine_name = _parse_engine_name(d.pop("engine_name", UNSET))

        def _parse_prompt_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                prompt_id_type_0 = UUID(data)

                return prompt_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        prompt_id = _parse_prompt_id(d.pop("prompt_id", UNSET))

        def _parse_prompt_text(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        prompt_text = _parse_prompt_text(d.pop("prompt_text", UNSET))

        def _parse_segment_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                segment_id_type_0 = UUID(data)

                return segment_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        segment_id = _parse_segment_id(d.pop("segment_id", UNSET))

        def _parse_segment_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        segment_name = _parse_segment_name(d.pop("segment_name", UNSET))

        def _parse_country(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        country = _parse_country(d.pop("country", UNSET))

        def _parse_persona(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        persona = _parse_persona(d.pop("persona", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        _period = d.pop("period", UNSET)
        period: datetime.date | Unset
        if isinstance(_period, Unset):
            period = UNSET
        else:
            period = datetime.date.fromisoformat(_period)

        visibility_report_visibility_group = cls(
            run_count=run_count,
            mention_count=mention_count,
            mention_rate=mention_rate,
            mention_rate_ci=mention_rate_ci,
            average_rank=average_rank,
            sentiment=sentiment,
            score=score,
            engine_id=engine_id,
            engine_name=engine_name,
            prompt_id=prompt_id,
            prompt_text=prompt_text,
            segment_id=segment_id,
            segment_name=segment_name,
            country=country,
            persona=persona,
            model=model,
            period=period,
        )

        return visibility_report_visibility_group
