from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="ErrorResponse")


@_attrs_define
class ErrorResponse:
    """The body of every error response.

    Attributes:
        error (Literal[True]): Always true: tells an error body from a data body.
        message (str): What went wrong, for a person. Short: it names the parameter and what it accepts, and shows at
            most the first characters of the value sent, never a long echo of it.
    """

    error: Literal[True]
    message: str

    def to_dict(self) -> dict[str, Any]:
        error = self.error

        message = self.message

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "error": error,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        error = cast(Literal[True], d.pop("error"))
        if error != True:
            raise ValueError(f"error must match const True, got '{error}'")

        message = d.pop("message")

        error_response = cls(
            error=error,
            message=message,
        )

        return error_response
