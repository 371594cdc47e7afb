from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MethodologyMention")


@_attrs_define
class MethodologyMention:
    """What counts as a mention.

    Attributes:
        definition (str):
        per_run (str):
        competitors (str):
    """

    definition: str
    per_run: str
    competitors: str

    def to_dict(self) -> dict[str, Any]:
        definition = self.definition

        per_run = self.per_run

        competitors = self.competitors

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "definition": definition,
                "per_run": per_run,
                "competitors": competitors,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        definition = d.pop("definition")

        per_run = d.pop("per_run")

        competitors = d.pop("competitors")

        methodology_mention = cls(
            definition=definition,
            per_run=per_run,
            competitors=competitors,
        )

        return methodology_mention
