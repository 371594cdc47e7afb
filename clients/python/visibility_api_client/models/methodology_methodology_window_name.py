from enum import StrEnum


class MethodologyMethodologyWindowName(StrEnum):
    CURRENT = "current"
    DAILY = "daily"
    RANGE = "range"
    TREND = "trend"

    def __str__(self) -> str:
        return str(self.value)
