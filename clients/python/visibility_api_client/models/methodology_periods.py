from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..models.methodology_periods_values_item import MethodologyPeriodsValuesItem

T = TypeVar("T", bound="MethodologyPeriods")


@_attrs_define
class MethodologyPeriods:
    """The interval parameter: one point per day, ISO week or calendar month.

    Attributes:
        parameter (Literal['interval']):
        values (list[MethodologyPeriodsValuesItem]):
        definition (str):
        endpoints (list[str]): Endpoint names (OpenAPI operationId) that take interval.
    """

    parameter: Literal["interval"]
    values: list[MethodologyPeriodsValuesItem]
    definition: str
    endpoints: list[str]

    def to_dict(self) -> dict[str, Any]:
        parameter = self.parameter

        values = []
        for values_item_data in self.values:
            values_item = values_item_data.value
            values.append(values_item)

        definition = self.definition

        endpoints = self.endpoints

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "parameter": parameter,
                "values": values,
                "definition": definition,
                "endpoints": endpoints,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        parameter = cast(Literal["interval"], d.pop("parameter"))
        if parameter != "interval":
            raise ValueError(f"parameter must match const 'interval', got '{parameter}'")

        values = []
        _values = d.pop("values")
        for values_item_data in _values:
            values_item = MethodologyPeriodsValuesItem(values_item_data)

            values.append(values_item)

        definition = d.pop("definition")

        endpoints = cast(list[str], d.pop("endpoints"))

        methodology_periods = cls(
            parameter=parameter,
            values=values,
            definition=definition,
            endpoints=endpoints,
        )

        return methodology_periods
