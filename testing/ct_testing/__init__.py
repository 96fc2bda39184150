"""pytest fixtures and helpers for ct and its plugins (see ``ct_testing.plugin``)."""

from ct_testing.wait import wait_until

__all__ = ["wait_until"]
