"""The `ct` module entry point: `python -m ct` runs the `ct` command line.

The SDK is `ct_core` (`from ct_core import CortexTrainingClient`) and the command line `ct_cli`;
this package only gives the program the short module name, as `python -m cortex_training` was
the reference's.
"""

from __future__ import annotations

from ct_core import __version__

__all__ = ["__version__"]
