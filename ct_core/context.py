"""What the parts of one SDK client share, and how the facade forwards to them.

`CortexTrainingClient` is a facade over separate objects, each owning one concern: the data plane
(`ct_core.data.plane.DataPlane`), generation (`ct_core.data.generate.Generation`) and downloads
(`ct_core.downloads.Downloads`). Each gets a `ClientContext` at construction — the transport bound to
the client's database and schema, the request registry, the polling settings, the injected sleep —
and nothing else of the client: no part reads another's attributes.

`forward_to(part, method)` declares a facade method that calls `method` on one of the parts. The
facade keeps every public method name and signature (type checkers and `help()` see the part's).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, overload

if TYPE_CHECKING:
    from ct_core.control.polling import PollSchedule
    from ct_core.data.results import RequestRegistry
    from ct_core.http.transport import Transport

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Credential:
    """How a client signs in, for code that must open a Snowflake session of its own (artifact
    downloads, Snowpark): a programmatic access token for `host`, a connection `profile`, or none."""

    kind: Literal["pat", "profile", "none"]
    host: str | None = None
    profile: str | None = None
    #: The token itself (PAT clients); never part of the repr.
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class PollSettings:
    """The polling schedule every wait follows: start at `interval`, grow by `multiplier` to
    `max_interval`, give up after `timeout` seconds."""

    interval: float
    timeout: float
    multiplier: float
    max_interval: float


@dataclass(frozen=True)
class ClientContext:
    """The explicit context of a client's parts."""

    transport: Transport
    requests: RequestRegistry
    poll: PollSettings
    sleep: Callable[[float], None]
    #: The largest request chunk a frame is cut into (the service's limit unless a test lowers it).
    max_request_chunk_bytes: int
    #: The control-plane reads the parts need (the facade's own methods).
    get_job: Callable[[str], dict[str, Any]]
    list_checkpoints: Callable[[str], list[dict[str, Any]]]
    #: The client's model-deployment methods (a plugin's, through a hook), read when first needed.
    model_deployments: Callable[[], Any]
    #: `waiter(request_id, seconds) -> bool`: blocks until the request may have finished (True) or
    #: `seconds` passed (False); request polls wait on it instead of sleeping. None: sleeps.
    request_waiter: Callable[[str, float], bool] | None = None

    def operations(self) -> OperationsContext:
        """The narrower context of a part that only sends operations and waits (the runs views)."""
        poll = self.poll
        return OperationsContext(
            request=self.transport.request,
            stream=self.transport.stream,
            poll_interval=poll.interval,
            poll_timeout=poll.timeout,
            poll_backoff_multiplier=poll.multiplier,
            poll_max_interval=poll.max_interval,
            sleep=self.sleep,
            deployments=self.model_deployments,
        )

    def poll_schedule(self) -> PollSchedule:
        from ct_core.control.polling import PollSchedule

        poll = self.poll
        return PollSchedule(
            interval=poll.interval,
            timeout=poll.timeout,
            multiplier=poll.multiplier,
            max_interval=poll.max_interval,
            sleep=self.sleep,
        )


class OperationsContext:
    """What a part that sends operations and waits on the poll schedule reads (`client.runs`,
    `client.datasets`): the generated operations take it as their transport (`request`, `stream`),
    and the waits read the client's poll settings and sleep under the same names as on the client.
    (A plain class: a dataclass costs a millisecond of every command's start-up to define.)"""

    __slots__ = (
        "deployments",
        "poll_backoff_multiplier",
        "poll_interval",
        "poll_max_interval",
        "poll_timeout",
        "request",
        "sleep",
        "stream",
    )

    def __init__(
        self,
        *,
        request: Callable[..., Any],
        stream: Callable[..., Any],
        poll_interval: float,
        poll_timeout: float,
        poll_backoff_multiplier: float,
        poll_max_interval: float,
        sleep: Callable[[float], None],
        deployments: Callable[[], Any],
    ) -> None:
        self.request, self.stream, self.sleep = request, stream, sleep
        #: The client's model-deployment methods, when a part needs them (`client.runs.deploy`).
        self.deployments = deployments
        self.poll_interval, self.poll_timeout = poll_interval, poll_timeout
        self.poll_backoff_multiplier, self.poll_max_interval = poll_backoff_multiplier, poll_max_interval


class forward_to(Generic[P, R]):
    """A facade attribute that calls `method` on the part stored under attribute `part`."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part = part
        self.method = method
        functools.update_wrapper(self, method)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type) -> forward_to[P, R]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type) -> Any:
        if obj is None:
            return self
        return functools.partial(self.method, getattr(obj, self.part))

    def __call__(self, obj: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.method(getattr(obj, self.part), *args, **kwargs)


class forward_lazily:
    """`forward_to` for a part whose module loads on first use (`module`, `Class.method`).

    The module is imported when the attribute is first read, not with the facade: a command line
    that never generates does not load generation. Read on the class, it is the part's method
    itself (so `help()` shows its signature and text); type checkers are given `forward_to`.
    """

    def __init__(self, part: str, module: str, qualname: str) -> None:
        self.part, self.module, self.qualname = part, module, qualname
        self._method: Callable[..., Any] | None = None

    def method(self) -> Callable[..., Any]:
        if self._method is None:
            target: Any = importlib.import_module(self.module)
            for name in self.qualname.split("."):
                target = getattr(target, name)
            self._method = target
        return self._method

    def __get__(self, obj: object | None, owner: type) -> Any:
        method = self.method()
        if obj is None:
            return method
        return functools.partial(method, getattr(obj, self.part))
