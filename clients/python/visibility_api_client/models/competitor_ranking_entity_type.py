from enum import StrEnum


class CompetitorRankingEntityType(StrEnum):
    BRAND = "brand"
    COMPETITOR = "competitor"

    def __str__(self) -> str:
        return str(self.value)
