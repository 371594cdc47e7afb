from enum import StrEnum


class DimensionsDimensionSurfaceSurface(StrEnum):
    API = "api"
    APP = "app"

    def __str__(self) -> str:
        return str(self.value)
