"""ct plugin `dflash2`: the DFlash2 draft training and serving rules as validators.

`rules` holds the checks; `plugin` connects them to the SDK's create-body validation.
"""

from __future__ import annotations
