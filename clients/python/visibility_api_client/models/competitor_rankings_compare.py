from enum import StrEnum


class CompetitorRankingsCompare(StrEnum):
    PREVIOUS_PERIOD = "previous_period"

    def __str__(self) -> str:
        return str(self.value)
