from enum import StrEnum


class RunsErrorCode(StrEnum):
    ALREADY_EXISTS = "already_exists"
    FAILED_PRECONDITION = "failed_precondition"
    INTERNAL = "internal"
    INVALID_ARGUMENT = "invalid_argument"
    NOT_FOUND = "not_found"
    PERMISSION_DENIED = "permission_denied"
    UNAUTHENTICATED = "unauthenticated"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return str(self.value)
