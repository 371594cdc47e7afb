from enum import StrEnum


class ForumOpportunityItemStatus(StrEnum):
    DISMISSED = "dismissed"
    ENGAGED = "engaged"
    OPEN = "open"

    def __str__(self) -> str:
        return str(self.value)
