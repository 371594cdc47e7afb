from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MethodologyMetricDefinition")


@_attrs_define
class MethodologyMetricDefinition:
    """
    Attributes:
        name (str): The body field.
        definition (str):
        formula (str): Over the counted runs of a slice; "mentioned" = runs whose answer mentions the entity.
        range_ (list[float | None]): [min, max]; null = unbounded.
        when_empty (float | None): The value when there is nothing to measure.
        aliases (list[str] | Unset): Other names for the same quantity (body fields or common names).
        empty_when (str | Unset): When there is nothing to measure.
        interval (str | Unset): The field holding its 95 % interval.
        example (str | Unset):
    """

    name: str
    definition: str
    formula: str
    range_: list[float | None]
    when_empty: float | None
    aliases: list[str] | Unset = UNSET
    empty_when: str | Unset = UNSET
    interval: str | Unset = UNSET
    example: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        definition = self.definition

        formula = self.formula

        range_ = []
        for range_item_data in self.range_:
            range_item: float | None
            range_item = range_item_data
            range_.append(range_item)

        when_empty: float | None
        when_empty = self.when_empty

        aliases: list[str] | Unset = UNSET
        if not isinstance(self.aliases, Unset):
            aliases = self.aliases

        empty_when = self.empty_when

        interval = self.interval

        example = self.example

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "definition": definition,
                "formula": formula,
                "range": range_,
                "when_empty": when_empty,
            }
        )
        if aliases is not UNSET:
            field_dict["aliases"] = aliases
        if empty_when is not UNSET:
            field_dict["empty_when"] = empty_when
        if interval is not UNSET:
            field_dict["interval"] = interval
        if example is not UNSET:
            field_dict["example"] = example

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        definition = d.pop("definition")

        formula = d.pop("formula")

        range_ = []
        _range_ = d.pop("range")
        for range_item_data in _range_:

            def _parse_range_item(data: object) -> float | None:
                if data is None:
                    return data
                return cast(float | None, data)

            range_item = _parse_range_item(range_item_data)

            range_.append(range_item)

        def _parse_when_empty(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        when_empty = _parse_when_empty(d.pop("when_empty"))

        aliases = cast(list[str], d.pop("aliases", UNSET))

        empty_when = d.pop("empty_when", UNSET)

        interval = d.pop("interval", UNSET)

        example = d.pop("example", UNSET)

        methodology_metric_definition = cls(
            name=name,
            definition=definition,
            formula=formula,
            range_=range_,
            when_empty=when_empty,
            aliases=aliases,
            empty_when=empty_when,
            interval=interval,
            example=example,
        )

        return methodology_metric_definition
