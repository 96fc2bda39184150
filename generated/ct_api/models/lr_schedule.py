from enum import StrEnum


class LrSchedule(StrEnum):
    COSINE = "cosine"
    WSD = "wsd"

    def __str__(self) -> str:
        return str(self.value)
