"""ct plugin `capacity`: the `ct capacity` command (operationId getCapacity; docs/plugins/capacity.md).

`cli` gathers the numbers through the SDK (`get_capacity`, `get_capacity_breakdown`), `table`
renders them for people with `--table`, and `plugin` registers the command.
"""

from __future__ import annotations
