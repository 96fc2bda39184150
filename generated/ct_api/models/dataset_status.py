from enum import StrEnum


class DatasetStatus(StrEnum):
    BUILDING = "building"
    FAILED = "failed"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
