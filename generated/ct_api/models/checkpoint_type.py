from enum import StrEnum


class CheckpointType(StrEnum):
    RESUMABLE = "resumable"
    WEIGHTS_ONLY = "weights-only"

    def __str__(self) -> str:
        return str(self.value)
