from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.methodology_ordering_order_key import MethodologyOrderingOrderKey


T = TypeVar("T", bound="MethodologyOrdering")


@_attrs_define
class MethodologyOrdering:
    """
    Attributes:
        endpoint (str): Endpoint name (OpenAPI operationId).
        list_ (str): Which list: $ is the body itself, otherwise a field of it.
        order (list[MethodologyOrderingOrderKey]):
        note (str | Unset):
    """

    endpoint: str
    list_: str
    order: list[MethodologyOrderingOrderKey]
    note: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        endpoint = self.endpoint

        list_ = self.list_

        order = []
        for order_item_data in self.order:
            order_item = order_item_data.to_dict()
            order.append(order_item)

        note = self.note

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "endpoint": endpoint,
                "list": list_,
                "order": order,
            }
        )
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.methodology_ordering_order_key import MethodologyOrderingOrderKey  # noqa: PLC0415

        d = dict(src_dict)
        endpoint = d.pop("endpoint")

        list_ = d.pop("list")

        order = []
        _order = d.pop("order")
        for order_item_data in _order:
            order_item = MethodologyOrderingOrderKey.from_dict(order_item_data)

            order.append(order_item)

        note = d.pop("note", UNSET)

        methodology_ordering = cls(
            endpoint=endpoint,
            list_=list_,
            order=order,
            note=note,
        )

        return methodology_ordering
