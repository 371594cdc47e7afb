from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyRun")


@_attrs_define
class MethodologyRun:
    """What counts as a run.

    Attributes:
        definition (str):
        counted_when (list[str]): All of these hold for a run that counts in the metrics.
    """

    definition: str
    counted_when: list[str]

    def to_dict(self) -> dict[str, Any]:
        definition = self.definition

        counted_when = self.counted_when

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "definition": definition,
                "counted_when": counted_when,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        definition = d.pop("definition")

        counted_when = cast(list[str], d.pop("counted_when"))

        methodology_run = cls(
            definition=definition,
            counted_when=counted_when,
        )

        return methodology_run
