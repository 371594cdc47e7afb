from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.signals_signal_entity_type import SignalsSignalEntityType
from ..models.signals_signal_metric import SignalsSignalMetric

if TYPE_CHECKING:
    from ..models.signal_rate import SignalRate
    from ..models.signals_signal_delta_ci import SignalsSignalDeltaCi


T = TypeVar("T", bound="SignalsSignal")


@_attrs_define
class SignalsSignal:
    """A tested slice whose change is a signal. current: the range (start_date..end_date); previous: the period compared
    with.

        Attributes:
            entity_type (SignalsSignalEntityType):
            competitor_id (None | UUID): null for the brand.
            name (str): The project's name for the brand, the competitor's name otherwise.
            engine_id (None | UUID): null: all engines.
            engine_name (None | str):
            segment_id (None | UUID): null: all segments (every counted run, in a segment or not).
            segment_name (None | str):
            country (None | str): ISO 3166-1 alpha-2; null: all countries (every counted run, naming a country or not).
            metric (SignalsSignalMetric):
            current (SignalRate): A mention rate of one period of a signal's slice: mentioned (the slice's counted runs that
                name the entity) / runs (the slice's counted runs). Defined in docs/metrics.md#signals.
            previous (SignalRate): A mention rate of one period of a signal's slice: mentioned (the slice's counted runs
                that name the entity) / runs (the slice's counted runs). Defined in docs/metrics.md#signals.
            delta (float): current.rate - previous.rate.
            delta_ci (SignalsSignalDeltaCi): Newcombe's hybrid score 95 % interval of delta, built on the two Wilson
                intervals.
            p_value (float): Two-sided p-value of the pooled two-proportion z-test.
            q_value (float): Benjamini-Hochberg adjusted p-value across all tested slices.
    """

    entity_type: SignalsSignalEntityType
    competitor_id: None | UUID
    name: str
    engine_id: None | UUID
    engine_name: None | str
    segment_id: None | UUID
    segment_name: None | str
    country: None | str
    metric: SignalsSignalMetric
    current: SignalRate
    previous: SignalRate
    delta: float
    delta_ci: SignalsSignalDeltaCi
    p_value: float
    q_value: float

    def to_dict(self) -> dict[str, Any]:
        entity_type = self.entity_type.value

        competitor_id: None | str
        if isinstance(self.competitor_id, UUID):
            competitor_id = str(self.competitor_id)
        else:
            competitor_id = self.competitor_id

        name = self.name

        engine_id: None | str
        if isinstance(self.engine_id, UUID):
            engine_id = str(self.engine_id)
        else:
            engine_id = self.engine_id

        engine_name: None | str
        engine_name = self.engine_name

        segment_id: None | str
        if isinstance(self.segment_id, UUID):
            segment_id = str(self.segment_id)
        else:
            segment_id = self.segment_id

        segment_name: None | str
        segment_name = self.segment_name

        country: None | str
        country = self.country

        metric = self.metric.value

        current = self.current.to_dict()

        previous = self.previous.to_dict()

        delta = self.delta

        delta_ci = self.delta_ci.to_dict()

        p_value = self.p_value

        q_value = self.q_value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "entity_type": entity_type,
                "competitor_id": competitor_id,
                "name": name,
                "engine_id": engine_id,
                "engine_name": engine_name,
                "segment_id": segment_id,
                "segment_name": segment_name,
                "country": country,
                "metric": metric,
                "current": current,
                "previous": previous,
                "delta": delta,
                "delta_ci": delta_ci,
                "p_value": p_value,
                "q_value": q_value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.signal_rate import SignalRate  # noqa: PLC0415
        from ..models.signals_signal_delta_ci import SignalsSignalDeltaCi  # noqa: PLC0415

        d = dict(src_dict)
        entity_type = SignalsSignalEntityType(d.pop("entity_type"))

        def _parse_competitor_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                competitor_id_type_0 = UUID(data)

                return competitor_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        competitor_id = _parse_competitor_id(d.pop("competitor_id"))

        name = d.pop("name")

        def _parse_engine_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                engine_id_type_0 = UUID(data)

                return engine_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        engine_id = _parse_engine_id(d.pop("engine_id"))

        def _parse_engine_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        engine_name = _parse_engine_name(d.pop("engine_name"))

        def _parse_segment_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                segment_id_type_0 = UUID(data)

                return segment_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        segment_id = _parse_segment_id(d.pop("segment_id"))

        def _parse_segment_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        segment_name = _parse_segment_name(d.pop("segment_name"))

        def _parse_country(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        country = _parse_country(d.pop("country"))

        metric = SignalsSignalMetric(d.pop("metric"))

        current = SignalRate.from_dict(d.pop("current"))

        previous = SignalRate.from_dict(d.pop("previous"))

        delta = d.pop("delta")

        delta_ci = SignalsSignalDeltaCi.from_dict(d.pop("delta_ci"))

        p_value = d.pop("p_value")

        q_value = d.pop("q_value")

        signals_signal = cls(
            entity_type=entity_type,
            competitor_id=competitor_id,
            name=name,
            engine_id=engine_id,
            engine_name=engine_name,
            segment_id=segment_id,
            segment_name=segment_name,
            country=country,
            metric=metric,
            current=current,
            previous=previous,
            delta=delta,
            delta_ci=delta_ci,
            p_value=p_value,
            q_value=q_value,
        )

        return signals_signal
