"""The Tinker API inside `ct local serve`: callers checked with the server's own tokens, and the
translation driving Cortex Training jobs on this very server through ct_core, as the caller's role."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import BaseRoute

from ct_tinker.service import TinkerRefusal, TinkerService

if TYPE_CHECKING:
    from ct_core.http.pool import Road

#: The prefix the SDK requires of an API key; the server's token may be given with or without it.
API_KEY_PREFIX = "tml-"
#: Result polls of the translation on a local server: quick, since its requests finish in milliseconds.
POLL_INTERVAL_S = 0.01
POLL_MAX_INTERVAL_S = 0.05


def identity_of_key(settings: Any, key: str) -> Any:
    """The server identity whose token is `key`, or `key` less the SDK's `tml-` prefix; None if neither."""
    if not key:
        return None
    identity = settings.identity_for_token(key)
    if identity is None and key.startswith(API_KEY_PREFIX):
        identity = settings.identity_for_token(key.removeprefix(API_KEY_PREFIX))
    return identity


def real_model_tokenizer(model_name: str) -> str | None:
    """The folder of a real model this server serves (it holds the model's tokenizer); None for the
    tiny byte model, whose tokenizer folder the service writes itself."""
    from ct_local.model import registry

    entry = registry.real_entry(model_name)
    return str(entry.path) if entry is not None and entry.path is not None else None


class EmbeddedTinker:
    """The `ct_local_services` object: routes now, clients of this server once it listens."""

    def __init__(self, state_dir: Path, settings: Any) -> None:
        from ct_core import RoleClients

        self.settings = settings
        self._request_waiter: Callable[[str, float], bool] | None = None
        self.road: Road | None = None
        self.clients = RoleClients(
            self._token_of, poll_interval=POLL_INTERVAL_S, poll_max_interval=POLL_MAX_INTERVAL_S
        )
        self.service = TinkerService(
            client_for=self._client_for,
            authenticate=self._authenticate,
            state_dir=state_dir / "tinker",
            tokenizer_for=real_model_tokenizer,
            # This server's trainer computes every Tinker loss by name (ct_local.model.trainer).
            backend_losses=True,
            # Offline, a sampling client's get_tokenizer() loads only a folder.
            tokenizer_as_model_name=True,
            # Its trainer takes Adam settings per step (ct_local.model.trainer.set_optimizer).
            per_step_optimizer=True,
        )

    def routes(self) -> list[BaseRoute]:
        return self.service.routes()

    def use_request_waiter(self, wait: Callable[[str, float], bool]) -> None:
        """The server's own signal that a request finished: results are read when it fires."""
        self._request_waiter = wait

    def use_in_process_road(self, road: Road) -> None:
        """The server's way in without a socket: the translation's requests skip HTTP's bytes."""
        self.road = road

    def start(self, base_url: str) -> None:
        self.clients.start(base_url, request_waiter=self._request_waiter, road=self.road)

    def stop(self) -> None:
        self.service.stop()
        self.clients.close()

    def _token_of(self, role: str) -> str | None:
        return next((t for t, r in self.settings.tokens.items() if r == role), None)

    def _authenticate(self, request: Request) -> str:
        from ct_local.settings import ANONYMOUS_ROLE

        if not self.settings.auth_required:
            return str(ANONYMOUS_ROLE)
        identity = identity_of_key(self.settings, request.headers.get("x-api-key", "").strip())
        if identity is None:
            raise TinkerRefusal(401, "this server needs one of its tokens as the Tinker API key (X-API-Key)")
        return str(identity.role)

    def _client_for(self, owner: str) -> Any:
        from ct_core.errors import CTConnectionError

        database, schema = self.service.database, self.service.schema
        assert database is not None and schema is not None  # the embedded service's defaults
        try:
            return self.clients.get(owner, database, schema)
        except CTConnectionError as exc:
            raise TinkerRefusal(503, str(exc)) from None


def embedded_service(state_dir: str, settings: Any) -> EmbeddedTinker | None:
    if not getattr(settings, "tinker_service", True):
        return None
    return EmbeddedTinker(Path(state_dir), settings)
