from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyRounding")


@_attrs_define
class MethodologyRounding:
    """Values are not rounded.

    Attributes:
        rounded (Literal[False]):
        definition (str):
        reciprocal_rank_unit (str):
        sentiment_unit (str):
    """

    rounded: Literal[False]
    definition: str
    reciprocal_rank_unit: str
    sentiment_unit: str

    def to_dict(self) -> dict[str, Any]:
        rounded = self.rounded

        definition = self.definition

        reciprocal_rank_unit = self.reciprocal_rank_unit

        sentiment_unit = self.sentiment_unit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "rounded": rounded,
                "definition": definition,
                "reciprocal_rank_unit": reciprocal_rank_unit,
                "sentiment_unit": sentiment_unit,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rounded = cast(Literal[False], d.pop("rounded"))
        if rounded != False:
            raise ValueError(f"rounded must match const False, got '{rounded}'")

        definition = d.pop("definition")

        reciprocal_rank_unit = d.pop("reciprocal_rank_unit")

        sentiment_unit = d.pop("sentiment_unit")

        methodology_rounding = cls(
            rounded=rounded,
            definition=definition,
            reciprocal_rank_unit=reciprocal_rank_unit,
            sentiment_unit=sentiment_unit,
        )

        return methodology_rounding
