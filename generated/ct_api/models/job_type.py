from enum import StrEnum


class JobType(StrEnum):
    LOG_PROBABILITY = "log_probability"
    SAMPLING = "sampling"
    TRAINING = "training"

    def __str__(self) -> str:
        return str(self.value)
