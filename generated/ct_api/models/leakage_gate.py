from enum import StrEnum


class LeakageGate(StrEnum):
    EXACT_DUPLICATE = "exact_duplicate"
    NEAR_DUPLICATE = "near_duplicate"

    def __str__(self) -> str:
        return str(self.value)
