"""The opt-in gate for SDK methods that exist before the service supports them.

`CORTEX_TRAINING_EXPERIMENTAL` lists the features a caller opts into, comma separated, each a
lower_snake_case name; `all` or `*` opts into every one. The variable is read on each call, not at
import, so a process (or a test) can change it at any time. A gated method called without opting in
raises `ExperimentalFeatureError` naming the variable and the value that would enable it.

Hiding a method here does not make it work: the zone-events helpers, for instance, are gated because
the service refuses their operation type.
"""

from __future__ import annotations

import os
import re

from ct_core.errors import ExperimentalFeatureError

#: The environment variable that opts into experimental SDK features.
ENV_EXPERIMENTAL = "CORTEX_TRAINING_EXPERIMENTAL"
#: Values of ENV_EXPERIMENTAL that opt into every feature at once.
ALL_FEATURES = frozenset({"all", "*"})
_FEATURE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

#: tail_events / stream_events: the `zmd-events` operation the service does not accept.
ZONE_EVENTS = "zone_events"


def _checked(feature: str) -> str:
    # Names end up in an env var and in messages, so only one spelling of each is allowed.
    if not isinstance(feature, str) or not _FEATURE_NAME.match(feature) or feature in ALL_FEATURES:
        raise ValueError(f"experimental feature names are lower_snake_case, got {feature!r}")
    return feature


def experimental_enabled(feature: str) -> bool:
    """Whether `feature` is opted into through CORTEX_TRAINING_EXPERIMENTAL right now."""
    name = _checked(feature)
    chosen = {part.strip().lower() for part in os.environ.get(ENV_EXPERIMENTAL, "").split(",")}
    chosen.discard("")
    return name in chosen or bool(chosen & ALL_FEATURES)


def require_experimental(feature: str, what: str) -> None:
    """Raise ExperimentalFeatureError unless `feature` is opted into; `what` names the gated API."""
    if not experimental_enabled(feature):
        raise ExperimentalFeatureError(
            f"{what} is experimental and not supported. To use it anyway (internal use only), "
            f"set {ENV_EXPERIMENTAL}={feature}",
            feature=feature,
        )
