from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..models.methodology_methodology_window_name import MethodologyMethodologyWindowName

T = TypeVar("T", bound="MethodologyMethodologyWindow")


@_attrs_define
class MethodologyMethodologyWindow:
    """
    Attributes:
        name (MethodologyMethodologyWindowName):
        days (int | None): Length in days; null when the range is the days that have data, or the one the request names
            (range).
        inclusive (Literal[True]):
        timezone (Literal['UTC']):
        definition (str):
        endpoints (list[str]): Endpoint names (OpenAPI operationId) whose numbers cover this window.
    """

    name: MethodologyMethodologyWindowName
    days: int | None
    inclusive: Literal[True]
    timezone: Literal["UTC"]
    definition: str
    endpoints: list[str]

    def to_dict(self) -> dict[str, Any]:
        name = self.name.value

        days: int | None
        days = self.days

        inclusive = self.inclusive

        timezone = self.timezone

        definition = self.definition

        endpoints = self.endpoints

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "days": days,
                "inclusive": inclusive,
                "timezone": timezone,
                "definition": definition,
                "endpoints": endpoints,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = MethodologyMethodologyWindowName(d.pop("name"))

        def _parse_days(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        days = _parse_days(d.pop("days"))

        inclusive = cast(Literal[True], d.pop("inclusive"))
        if inclusive != True:
            raise ValueError(f"inclusive must match const True, got '{inclusive}'")

        timezone = cast(Literal["UTC"], d.pop("timezone"))
        if timezone != "UTC":
            raise ValueError(f"timezone must match const 'UTC', got '{timezone}'")

        definition = d.pop("definition")

        endpoints = cast(list[str], d.pop("endpoints"))

        methodology_methodology_window = cls(
            name=name,
            days=days,
            inclusive=inclusive,
            timezone=timezone,
            definition=definition,
            endpoints=endpoints,
        )

        return methodology_methodology_window
