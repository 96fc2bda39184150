from enum import StrEnum


class Dflash2ConfigAttentionBackend(StrEnum):
    EAGER = "eager"
    FLEX_ATTENTION = "flex_attention"
    SDPA = "sdpa"

    def __str__(self) -> str:
        return str(self.value)
