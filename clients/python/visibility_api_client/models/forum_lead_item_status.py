from enum import StrEnum


class ForumLeadItemStatus(StrEnum):
    DISMISSED = "dismissed"
    ENGAGED = "engaged"
    OPEN = "open"

    def __str__(self) -> str:
        return str(self.value)
