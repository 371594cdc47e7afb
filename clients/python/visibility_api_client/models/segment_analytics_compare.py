from enum import StrEnum


class SegmentAnalyticsCompare(StrEnum):
    PREVIOUS_PERIOD = "previous_period"

    def __str__(self) -> str:
        return str(self.value)
