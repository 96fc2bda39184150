"""The exception tree of ct: one root (`CTError`) that every error the SDK raises derives from.

Subclasses are added by the module that owns the failure (transport, wire, chunk groups,
downloads, deployments); they all live here so that callers can catch by family.
"""

from __future__ import annotations


class CTError(Exception):
    """Root of every error raised by ct_core."""


class WireError(CTError, ValueError):
    """A DSSST1 frame or byte-chunk list is malformed, unsafe or inconsistent."""
