"""ct plugin `lora`: LoRA adapter configs (`peft_config`) for jobs (docs/plugins/lora.md).

`ct_lora.config` holds the rules, `ct_lora.plugin` the hooks the SDK and CLI call, and `ct_lora.cli`
the `ct lora` commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ct_lora.config import adapter_mismatches, build_peft_config, check_peft_config


def __getattr__(name: str) -> Any:
    # Loaded on first use: `ct --help` imports this package (for its plugin module) and needs none of it.
    if name in __all__:
        from ct_lora import config

        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["adapter_mismatches", "build_peft_config", "check_peft_config"]
