from enum import StrEnum


class WarmLeadItemPlatform(StrEnum):
    FORUM = "forum"
    HACKERNEWS = "hackernews"
    QUORA = "quora"
    REDDIT = "reddit"
    STACKEXCHANGE = "stackexchange"

    def __str__(self) -> str:
        return str(self.value)
