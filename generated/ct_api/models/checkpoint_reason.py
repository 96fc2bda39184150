from enum import StrEnum


class CheckpointReason(StrEnum):
    BEST = "best"
    CADENCE = "cadence"
    FINAL = "final"

    def __str__(self) -> str:
        return str(self.value)
