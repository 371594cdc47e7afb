from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.methodology_intervals_interval_counts import MethodologyIntervalsIntervalCounts


T = TypeVar("T", bound="MethodologyIntervals")


@_attrs_define
class MethodologyIntervals:
    """The Wilson score interval beside every share-of-runs rate.

    Attributes:
        method (Literal['wilson']):
        confidence (Literal[0.95]):
        z (float):
        formula (str):
        fields (list[str]):
        shape (str):
        null_when (str):
        counts (list[MethodologyIntervalsIntervalCounts]):
        not_for (list[str]):
    """

    method: Literal["wilson"]
    confidence: Literal[0.95]
    z: float
    formula: str
    fields: list[str]
    shape: str
    null_when: str
    counts: list[MethodologyIntervalsIntervalCounts]
    not_for: list[str]

    def to_dict(self) -> dict[str, Any]:
        method = self.method

        confidence = self.confidence

        z = self.z

        formula = self.formula

        fields = self.fields

        shape = self.shape

        null_when = self.null_when

        counts = []
        for counts_item_data in self.counts:
            counts_item = counts_item_data.to_dict()
            counts.append(counts_item)

        not_for = self.not_for

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "method": method,
                "confidence": confidence,
                "z": z,
                "formula": formula,
                "fields": fields,
                "shape": shape,
                "null_when": null_when,
                "counts": counts,
                "not_for": not_for,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.methodology_intervals_interval_counts import MethodologyIntervalsIntervalCounts  # noqa: PLC0415

        d = dict(src_dict)
        method = cast(Literal["wilson"], d.pop("method"))
        if method != "wilson":
            raise ValueError(f"method must match const 'wilson', got '{method}'")

        confidence = cast(Literal[0.95], d.pop("confidence"))
        if confidence != 0.95:
            raise ValueError(f"confidence must match const 0.95, got '{confidence}'")

        z = d.pop("z")

        formula = d.pop("formula")

        fields = cast(list[str], d.pop("fields"))

        shape = d.pop("shape")

        null_when = d.pop("null_when")

        counts = []
        _counts = d.pop("counts")
        for counts_item_data in _counts:
            counts_item = MethodologyIntervalsIntervalCounts.from_dict(counts_item_data)

            counts.append(counts_item)

        not_for = cast(list[str], d.pop("not_for"))

        methodology_intervals = cls(
            method=method,
            confidence=confidence,
            z=z,
            formula=formula,
            fields=fields,
            shape=shape,
            null_when=null_when,
            counts=counts,
            not_for=not_for,
        )

        return methodology_intervals
