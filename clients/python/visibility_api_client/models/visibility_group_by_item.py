from enum import StrEnum


class VisibilityGroupByItem(StrEnum):
    COUNTRY = "country"
    DAY = "day"
    ENGINE = "engine"
    MODEL = "model"
    MONTH = "month"
    PERSONA = "persona"
    PROMPT = "prompt"
    SEGMENT = "segment"
    WEEK = "week"

    def __str__(self) -> str:
        return str(self.value)
