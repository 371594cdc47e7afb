from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..models.methodology_ordering_order_key_direction import MethodologyOrderingOrderKeyDirection
from ..types import UNSET, Unset

T = TypeVar("T", bound="MethodologyOrderingOrderKey")


@_attrs_define
class MethodologyOrderingOrderKey:
    """
    Attributes:
        field (str):
        direction (MethodologyOrderingOrderKeyDirection):
        nulls (Literal['last'] | Unset):
    """

    field: str
    direction: MethodologyOrderingOrderKeyDirection
    nulls: Literal["last"] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        field = self.field

        direction = self.direction.value

        nulls = self.nulls

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "field": field,
                "direction": direction,
            }
        )
        if nulls is not UNSET:
            field_dict["nulls"] = nulls

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        field = d.pop("field")

        direction = MethodologyOrderingOrderKeyDirection(d.pop("direction"))

        nulls = cast(Literal["last"] | Unset, d.pop("nulls", UNSET))
        if nulls != "last" and not isinstance(nulls, Unset):
            raise ValueError(f"nulls must match const 'last', got '{nulls}'")

        methodology_ordering_order_key = cls(
            field=field,
            direction=direction,
            nulls=nulls,
        )

        return methodology_ordering_order_key
