from enum import StrEnum


class Hardware(StrEnum):
    B200 = "B200"
    B300 = "B300"
    H200 = "H200"

    def __str__(self) -> str:
        return str(self.value)
