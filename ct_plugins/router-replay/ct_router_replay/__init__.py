"""ct plugin `router-replay`: router_replay block checks and the `ct router-replay` commands.

`rules` holds the `router_replay` block rules, `planner` the cache-size arithmetic, `plugin` the hooks and
`cli` the commands (plan, bootstrap, discard).
"""

from __future__ import annotations
