"""ct plugin `lora`: LoRA adapter configs (`peft_config`) for jobs (rest-api §7.3, §8.2, §8.3).

`ct_lora.config` holds the rules, `ct_lora.plugin` the hooks the SDK and CLI call, and `ct_lora.cli`
the `ct lora` commands.
"""

from __future__ import annotations

from ct_lora.config import adapter_mismatches, build_peft_config, check_peft_config

__all__ = ["adapter_mismatches", "build_peft_config", "check_peft_config"]
