from enum import StrEnum


class RunsItemStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    PARTIAL = "partial"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
