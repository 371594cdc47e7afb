from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyComparison")


@_attrs_define
class MethodologyComparison:
    """Comparing two periods (compare, compare_start_date, compare_end_date): which period, which fields, and the interval
    of a difference of two rates.

        Attributes:
            parameters (list[str]):
            previous_period (str):
            endpoints (list[str]): The endpoints that compare.
            period_field (str):
            fields (list[str]): The change fields, each beside the interval of its rate (R_change beside R_ci).
            shape (str):
            matching (str):
            filters (str):
            method (Literal['newcombe-hybrid-score']):
            confidence (Literal[0.95]):
            z (float):
            formula (str):
            significant (str):
            null_when (str):
    """

    parameters: list[str]
    previous_period: str
    endpoints: list[str]
    period_field: str
    fields: list[str]
    shape: str
    matching: str
    filters: str
    method: Literal["newcombe-hybrid-score"]
    confidence: Literal[0.95]
    z: float
    formula: str
    significant: str
    null_when: str

    def to_dict(self) -> dict[str, Any]:
        parameters = self.parameters

        previous_period = self.previous_period

        endpoints = self.endpoints

        period_field = self.period_field

        fields = self.fields

        shape = self.shape

        matching = self.matching

        filters = self.filters

        method = self.method

        confidence = self.confidence

        z = self.z

        formula = self.formula

        significant = self.significant

        null_when = self.null_when

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "parameters": parameters,
                "previous_period": previous_period,
                "endpoints": endpoints,
                "period_field": period_field,
                "fields": fields,
                "shape": shape,
                "matching": matching,
                "filters": filters,
                "method": method,
                "confidence": confidence,
                "z": z,
                "formula": formula,
                "significant": significant,
                "null_when": null_when,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        parameters = cast(list[str], d.pop("parameters"))

        previous_period = d.pop("previous_period")

        endpoints = cast(list[str], d.pop("endpoints"))

        period_field = d.pop("period_field")

        fields = cast(list[str], d.pop("fields"))

        shape = d.pop("shape")

        matching = d.pop("matching")

        filters = d.pop("filters")

        method = cast(Literal["newcombe-hybrid-score"], d.pop("method"))
        if method != "newcombe-hybrid-score":
            raise ValueError(f"method must match const 'newcombe-hybrid-score', got '{method}'")

        confidence = cast(Literal[0.95], d.pop("confidence"))
        if confidence != 0.95:
            raise ValueError(f"confidence must match const 0.95, got '{confidence}'")

        z = d.pop("z")

        formula = d.pop("formula")

        significant = d.pop("significant")

        null_when = d.pop("null_when")

        methodology_comparison = cls(
            parameters=parameters,
            previous_period=previous_period,
            endpoints=endpoints,
            period_field=period_field,
            fields=fields,
            shape=shape,
            matching=matching,
            filters=filters,
            method=method,
            confidence=confidence,
            z=z,
            formula=formula,
            significant=significant,
            null_when=null_when,
        )

        return methodology_comparison
