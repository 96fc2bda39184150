from enum import StrEnum


class ModelConfigTier(StrEnum):
    L = "L"
    M = "M"
    S = "S"

    def __str__(self) -> str:
        return str(self.value)
