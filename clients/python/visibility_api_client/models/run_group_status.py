from enum import StrEnum


class RunGroupStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    PARTIAL = "partial"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
