from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ComparisonPeriod")


@_attrs_define
class ComparisonPeriod:
    """The days the R_change fields compare against, inclusive (UTC): compare_start_date..compare_end_date, or with
    compare=previous_period the same number of days as the current range ending the day before it starts. See
    docs/metrics.md#comparing-two-periods.

        Attributes:
            start_date (datetime.date):
            end_date (datetime.date):
    """

    start_date: datetime.date
    end_date: datetime.date

    def to_dict(self) -> dict[str, Any]:
        start_date = self.start_date.isoformat()

        end_date = self.end_date.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "start_date": start_date,
                "end_date": end_date,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        start_date = datetime.date.fromisoformat(d.pop("start_date"))

        end_date = datetime.date.fromisoformat(d.pop("end_date"))

        comparison_period = cls(
            start_date=start_date,
            end_date=end_date,
        )

        return comparison_period
