"""A client library for accessing Cortex Training"""

# The client classes load on first use: ct_core imports only `routes` from this package, and the
# client module pulls in httpx, which a command that never touches the generated client does not need.
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import AuthenticatedClient, Client

__all__ = (
    "AuthenticatedClient",
    "Client",
)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
