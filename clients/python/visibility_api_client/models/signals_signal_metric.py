from enum import StrEnum


class SignalsSignalMetric(StrEnum):
    MENTION_RATE = "mention_rate"

    def __str__(self) -> str:
        return str(self.value)
