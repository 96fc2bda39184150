"""ct plugin `router-replay`: router_replay block checks and the `ct router-replay` commands.

`rules` holds the `router_replay` block rules, `planner` the cache-size arithmetic, `pairs` the bootstrap
helper `ReplayPairs` (default receiver, polling, one remembered zone id per source/target pair, replay
frames with `identity_version: 1`), `plugin` the hooks and `cli` the commands (plan, bootstrap, discard).
"""

from __future__ import annotations
