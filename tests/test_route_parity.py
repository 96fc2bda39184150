"""The local server, with the runs service embedded, and the REST contract agree route for route.

Every operation of openapi/cortex-training.yaml has exactly one handler on the server, reached by
a request shaped as the client sends it; every route of the server is an operation (bound by its
operationId, with the spec's method and path) or one of the routes ct_local names as outside the
contract (ct_local.http.routing.NON_CONTRACT).

The runs service contributes its routes through the ``ct_local_services`` hook, each bound by
the operationId of a runs operation of the spec, one handler per operation. Other services of that
hook may serve an API of their own beside the contract (the Tinker-compatible one under /api/v1):
their routes are not the contract's to list, but they must not serve, or shadow, one of its
operations (an unnamed route with an operation's method and path shape counts as its handler).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.routing import Match, Mount, Route

from ct_core.http.routes import Routes, operation_ids, route_of
from ct_local.app import DATA_PLANE_OPERATIONS, all_routes, plugin_services
from ct_local.dataplane.seam import DATA_PLANE_ACTIONS
from ct_local.http.routing import NON_CONTRACT, extra_route, operation_route
from ct_local.settings import ServerSettings

SPEC = Path(__file__).resolve().parents[1] / "openapi" / "cortex-training.yaml"
_PLACEHOLDER = re.compile(r"{(\w+)(?::\w+)?}")
#: Path values as a client fills them; an artifact path holds a "/" (it is sent percent-encoded).
_SAMPLE_VALUES = {"endpoint": "cortex-training", "artifact_path": "_logs/sub/execution.jsonl"}


def _shape(path: str) -> str:
    return _PLACEHOLDER.sub("{}", path)


def _plain(routes: list[Any]) -> list[Route]:
    """The routes, less the mounts of services that own a prefix outside the contract's (the
    Tinker API's /api/v1): no request of the contract can reach those."""
    mounts = [route for route in routes if isinstance(route, Mount)]
    assert all(not mount.path.startswith("/api/v2") for mount in mounts), [m.path for m in mounts]
    assert all(isinstance(route, Route | Mount) for route in routes)
    return [route for route in routes if isinstance(route, Route)]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return plugin_services(ServerSettings(state_dir=tmp_path_factory.mktemp("parity")))


@pytest.fixture(scope="module")
def server_routes(services: list[Any]) -> list[Route]:
    """Every route of the app, in the order it matches: every service's, then ct_local's."""
    return _plain(all_routes(services))


def _runs_services(services: list[Any]) -> list[Any]:
    runs = [service for service in services if type(service).__module__.split(".")[0] == "ct_runs"]
    assert runs, "the runs service is not embedded (its ct_local_services hook offered nothing)"
    return runs


@pytest.fixture(scope="module")
def contract_routes(services: list[Any]) -> list[Route]:
    """The routes that must each be an operation or in NON_CONTRACT: ct_local's and the runs service's."""
    return _plain(all_routes(_runs_services(services)))


@pytest.fixture(scope="module")
def runs_routes(services: list[Any]) -> list[Route]:
    """The routes the runs service adds (ct_local's own left out)."""
    return _plain([route for service in _runs_services(services) for route in service.routes()])


def _operation_of(route: Route) -> str | None:
    """The operation a route serves: its name when that is an operationId, else the runs operation
    with its method and path shape (a service route that is not named by operationId)."""
    if route.name in operation_ids():
        return route.name
    for operation in operation_ids():
        method, path = route_of(operation)
        if _shape(path) == _shape(route.path) and method in (route.methods or ()):
            return operation
    return None


def test_every_operation_has_exactly_one_handler(server_routes: list[Route]) -> None:
    served: dict[str, list[Route]] = {operation: [] for operation in operation_ids()}
    for route in server_routes:
        operation = _operation_of(route)
        if operation is not None and route.name not in NON_CONTRACT:
            served[operation].append(route)
    problems = {operation: len(routes) for operation, routes in served.items() if len(routes) != 1}
    assert problems == {}, f"operations without exactly one handler (count): {problems}"


def test_the_runs_service_binds_one_handler_to_each_runs_operation_by_name(runs_routes: list[Route]) -> None:
    names = sorted(route.name for route in runs_routes)
    spec = yaml.safe_load(SPEC.read_text())
    runs_operations = sorted(
        operation["operationId"]
        for item in spec["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "runs" in operation.get("tags", ())
    )
    assert len(runs_operations) >= 9, runs_operations
    assert names == runs_operations, "runs routes not named by an operationId, or not one per operation"
    for route in runs_routes:
        method, path = route_of(route.name)
        assert (route.path, route.methods) == (path, {method, "HEAD"} if method == "GET" else {method})


def test_every_handler_is_an_operation_or_listed_outside_the_contract(contract_routes: list[Route]) -> None:
    strays = []
    for route in contract_routes:
        if route.name in NON_CONTRACT:
            continue
        # Named by its operationId: a contract route may not be matched by its shape alone.
        operation = route.name if route.name in operation_ids() else None
        if operation is None:
            strays.append(f"{sorted(route.methods or ())} {route.path} ({route.name})")
            continue
        method, path = route_of(operation)
        # Bound routes keep the spec's path exactly (parameter names included), and its method.
        if route.name == operation:
            assert _PLACEHOLDER.sub(r"{\1}", route.path) == path, route.name
        assert method in (route.methods or ()), route.name
    assert strays == [], "routes that are neither an operation nor in NON_CONTRACT"
    # Nothing is listed outside the contract that the server does not serve.
    assert {route.name for route in contract_routes if route.name in NON_CONTRACT} == set(NON_CONTRACT)


@pytest.mark.parametrize("operation", operation_ids())
def test_a_request_as_the_client_sends_it_reaches_its_operation(
    server_routes: list[Route], operation: str
) -> None:
    method, template = route_of(operation)
    values = {name: _SAMPLE_VALUES.get(name, f"{name}-1") for name in _PLACEHOLDER.findall(template)}
    path = Routes({}).path(operation, values)
    # The server matches the decoded path, as Starlette's scope carries it.
    scope: dict[str, Any] = {"type": "http", "method": method, "path": path.replace("%2F", "/")}
    first = next(route for route in server_routes if route.matches(scope)[0] is Match.FULL)
    assert _operation_of(first) == operation and first.name not in NON_CONTRACT, (path, first.name)


def test_the_data_plane_operations_are_the_data_plane_actions() -> None:
    assert sorted(DATA_PLANE_OPERATIONS.values()) == sorted(DATA_PLANE_ACTIONS)
    assert {op for op in operation_ids() if route_of(op)[1].split("/")[-1] in DATA_PLANE_ACTIONS} <= set(
        DATA_PLANE_OPERATIONS
    )


def test_binding_refuses_what_is_neither_an_operation_nor_listed(tmp_path: Path) -> None:
    async def handler(request: Any) -> Any:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match="unknown REST operation"):
        operation_route("noSuchOperation", handler)
    with pytest.raises(ValueError, match="leave it out"):
        operation_route("getJob", handler, methods=["POST"])
    with pytest.raises(ValueError, match="no path parameter"):
        operation_route("getJob", handler, converters={"rest": "path"})
    with pytest.raises(ValueError, match="NON_CONTRACT"):
        extra_route("secretLever", "/_ct/secret", handler, ["GET"])
    method, path = route_of("getLocalArtifact", {"artifact_path": "path"})
    assert (method, path) == ("GET", "/_artifacts/{experiment_name}/{run_name}/{artifact_path:path}")
