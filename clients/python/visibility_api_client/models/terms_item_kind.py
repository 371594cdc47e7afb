from enum import StrEnum


class TermsItemKind(StrEnum):
    BRAND = "brand"
    DOMAIN = "domain"

    def __str__(self) -> str:
        return str(self.value)
