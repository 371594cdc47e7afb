from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.confidence_interval import ConfidenceInterval
    from ..models.difference_interval import DifferenceInterval


T = TypeVar("T", bound="RateChange")


@_attrs_define
class RateChange:
    """How a rate changed from the comparison period (compare=previous_period or compare_start_date..compare_end_date) to
    the current one, computed from the counts behind both rates (x of n), never from rounded rates. A row with no
    counterpart in the comparison period (n = 0 there) has previous, previous_ci, delta and delta_ci null and
    significant false. See docs/metrics.md#comparing-two-periods.

        Attributes:
            previous (float | None): The rate over the comparison period, x2 / n2; null when n2 = 0.
            previous_ci (ConfidenceInterval | None): Wilson 95 % interval of previous; null when n2 = 0.
            delta (float | None): The current rate minus previous, x1 / n1 - x2 / n2; null when n1 = 0 or n2 = 0.
            delta_ci (DifferenceInterval | None): Newcombe's hybrid score 95 % interval of delta; null when delta is.
            significant (bool): delta_ci excludes 0 (low > 0 or high < 0): at the 95 % level, the rate changed. False when
                delta is null.
    """

    previous: float | None
    previous_ci: ConfidenceInterval | None
    delta: float | None
    delta_ci: DifferenceInterval | None
    significant: bool

    def to_dict(self) -> dict[str, Any]:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415
        from ..models.difference_interval import DifferenceInterval  # noqa: PLC0415

        previous: float | None
        previous = self.previous

        previous_ci: dict[str, Any] | None
        if isinstance(self.previous_ci, ConfidenceInterval):
            previous_ci = self.previous_ci.to_dict()
        else:
            previous_ci = self.previous_ci

        delta: float | None
        delta = self.delta

        delta_ci: dict[str, Any] | None
        if isinstance(self.delta_ci, DifferenceInterval):
            delta_ci = self.delta_ci.to_dict()
        else:
            delta_ci = self.delta_ci

        significant = self.significant

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "previous": previous,
                "previous_ci": previous_ci,
                "delta": delta,
                "delta_ci": delta_ci,
                "significant": significant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.confidence_interval import ConfidenceInterval  # noqa: PLC0415
        from ..models.difference_interval import DifferenceInterval  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_previous(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        previous = _parse_previous(d.pop("previous"))

        def _parse_previous_ci(data: object) -> ConfidenceInterval | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                previous_ci_type_0 = ConfidenceInterval.from_dict(data)

                return previous_ci_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfidenceInterval | None, data)

        previous_ci = _parse_previous_ci(d.pop("previous_ci"))

        def _parse_delta(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        delta = _parse_delta(d.pop("delta"))

        def _parse_delta_ci(data: object) -> DifferenceInterval | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                delta_ci_type_0 = DifferenceInterval.from_dict(data)

                return delta_ci_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DifferenceInterval | None, data)

        delta_ci = _parse_delta_ci(d.pop("delta_ci"))

        significant = d.pop("significant")

        rate_change = cls(
            previous=previous,
            previous_ci=previous_ci,
            delta=delta,
            delta_ci=delta_ci,
            significant=significant,
        )

        return rate_change
