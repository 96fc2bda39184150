"""ct plugin `capacity`: the `ct capacity` command (rest-api §5.5, CLI-09, CP-11..13).

`cli` gathers the numbers through the SDK (`get_capacity`, `get_capacity_breakdown`), `table`
renders them for people with `--table`, and `plugin` registers the command.
"""

from __future__ import annotations
