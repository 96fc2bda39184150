"""Finding, loading and describing ct plugins.

Plugins are published under the entry-point group `ct` (see `ct_core.hookspecs` for the hooks
they may implement). Nothing happens at import time: a plugin manager is built by
`new_plugin_manager()` and filled by `load_plugins()`; `get_plugin_manager()` does both once
per process and is what the SDK's validators and the CLI share.

Loading is forgiving by design: a plugin that cannot be imported or registered is recorded
in `pm.load_errors` (and logged as a warning under its name) and every other plugin still
loads, so one broken install cannot take the whole command line down. `CT_PLUGINS` limits
which plugins load: a comma-separated list of entry-point or distribution names, where an
empty value loads none and an unset variable loads all.

A plugin names the commands it adds in a second entry-point group, `ct.commands`
(`command = the plugin's module`), so a command line can load only the plugin that serves its
command: `get_plugin_manager(command=...)` loads none for a core command and only the declaring
plugin's for a declared one; the others load on the next plain `get_plugin_manager()` (the SDK's
validators, `ct plugins`, the local server's services). A command no plugin declares loads every
plugin, so a plugin without that metadata still serves its commands.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import traceback
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from ct_core import hookspecs

if TYPE_CHECKING:
    from importlib import metadata

    from pluggy import HookImpl

__all__ = [
    "ALLOW_ENV_VAR",
    "COMMANDS_GROUP",
    "ENTRY_POINT_GROUP",
    "CTPluginManager",
    "PluginEntryPoint",
    "PluginLoadError",
    "allowed_plugins",
    "call_each",
    "discover_entry_points",
    "get_plugin_manager",
    "load_plugins",
    "missing_plugin_error",
    "new_plugin_manager",
    "plugin_info",
    "register_builtin",
    "register_commands",
    "reset_plugin_manager",
    "run_create_body_validators",
    "run_sub_job_validators",
]

#: Entry-point group third-party distributions publish their plugin module under.
ENTRY_POINT_GROUP = hookspecs.PROJECT_NAME
#: Entry-point group where a plugin's distribution names its commands: `command = plugin module`,
#: the same value as its entry point in `ENTRY_POINT_GROUP`.
COMMANDS_GROUP = f"{ENTRY_POINT_GROUP}.commands"
#: Environment variable limiting which plugins load (comma list; empty string = none).
ALLOW_ENV_VAR = "CT_PLUGINS"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PluginLoadError:
    """A plugin that could not be loaded or whose hook failed, named so users can act on it."""

    name: str
    error: str
    traceback: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "error": self.error}


@dataclass(frozen=True)
class PluginEntryPoint:
    """One `ct` entry point: `name = module[:attr]`, and the distribution that published it."""

    name: str
    value: str
    dist_name: str = ""
    #: The `.dist-info` (or `.egg-info`) folder, read only when `ct plugins` asks for metadata.
    dist_path: str | None = None
    dist: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_metadata(cls, ep: metadata.EntryPoint) -> PluginEntryPoint:
        dist = ep.dist
        name = dist.metadata["Name"] if dist is not None else ""
        return cls(name=ep.name, value=ep.value, dist_name=name or "", dist=dist)

    def load(self) -> Any:
        module_name, _, attribute = self.value.partition(":")
        target: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            target = getattr(target, part)
        return target

    def distribution(self) -> metadata.Distribution | None:
        if self.dist is not None:
            return self.dist  # type: ignore[no-any-return]
        if self.dist_path is None:
            return None
        from importlib import metadata

        return metadata.Distribution.at(self.dist_path)


#: The validator hooks whose implementations run one by one, so one that raises spares the others.
VALIDATOR_HOOKS = frozenset({"ct_validate_sub_job", "ct_validate_create_body"})


class CTPluginManager(pluggy.PluginManager):
    """A pluggy manager for project `ct` that also remembers where each plugin came from.

    The validator hooks (`VALIDATOR_HOOKS`) are run through `run_sub_job_validators` and
    `run_create_body_validators`, which call each implementation on its own (see there).
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.load_errors: list[PluginLoadError] = []
        # plugin name -> the entry point it was loaded from (for `ct plugins` versions).
        self.sources: dict[str, PluginEntryPoint] = {}
        self.builtin_names: set[str] = set()
        self.entry_points_loaded = False
        #: Entry points found but left unloaded by a start for one command (`get_plugin_manager`).
        self.deferred: list[PluginEntryPoint] | None = None


def _is_wrapper(impl: HookImpl) -> bool:
    return bool(getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False))


def _located(kwargs: Mapping[str, object], problem: str) -> str:
    """Prefix a sub-job validator's problem with the sub-job's location, as its own problems are."""
    location = kwargs.get("location")
    if isinstance(location, str) and location and not problem.startswith(location):
        return f"{location}: {problem}"
    return problem


def _entry_points_section(text: str, group: str) -> list[tuple[str, str]]:
    """The `name = value` lines of one `[group]` section of an entry_points.txt file."""
    found: list[tuple[str, str]] = []
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            in_group = line[1:-1].strip() == group
        elif in_group and "=" in line:
            name, _, value = line.partition("=")
            found.append((name.strip(), value.strip()))
    return found


def discover_entry_points(
    group: str = ENTRY_POINT_GROUP, path: Iterable[str] | None = None
) -> list[PluginEntryPoint]:
    """The entry points of `group` published by the distributions on `path` (default `sys.path`).

    This reads `entry_points.txt` files directly instead of going through `importlib.metadata`,
    whose import (the `email` package, to parse METADATA) alone costs a large share of `ct`'s
    start-up; the rules are the same: the first distribution of a (normalized) name on the path
    wins, and a distribution's version is read only when `ct plugins` asks for it.
    """
    return _discover((group,), path)[group]


def _discover(groups: tuple[str, ...], path: Iterable[str] | None) -> dict[str, list[PluginEntryPoint]]:
    """The entry points of several groups, in one pass over the distributions on `path`."""
    seen: set[str] = set()
    found: dict[str, list[PluginEntryPoint]] = {group: [] for group in groups}
    for entry in sys.path if path is None else path:
        directory = entry or "."
        try:
            names = sorted(os.listdir(directory))
        except OSError:  # a zip file or a folder that no longer exists
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            dist_name = _normalize(name.rsplit(".", 1)[0].split("-", 1)[0])
            if dist_name in seen:
                continue
            seen.add(dist_name)
            info = os.path.join(directory, name)
            try:
                with open(os.path.join(info, "entry_points.txt"), encoding="utf-8") as stream:
                    text = stream.read()
            except OSError:
                continue
            for group in groups:
                for ep_name, value in _entry_points_section(text, group):
                    found[group].append(
                        PluginEntryPoint(name=ep_name, value=value, dist_name=dist_name, dist_path=info)
                    )
    return found


def plugins_for_command(
    command: str,
    plugins: Iterable[PluginEntryPoint],
    commands: Iterable[PluginEntryPoint],
) -> list[PluginEntryPoint] | None:
    """The plugin entry points that serve `command`, as the `ct.commands` metadata declares them.

    None when no distribution declares the command (then only loading every plugin can tell who
    serves it, if anyone). A declaration points at the plugin module of its own distribution.
    """
    owners = {(ep.dist_name, ep.value.partition(":")[0].strip()) for ep in commands if ep.name == command}
    if not owners:
        return None
    return [ep for ep in plugins if (ep.dist_name, ep.value.partition(":")[0].strip()) in owners]


def new_plugin_manager() -> CTPluginManager:
    """Return a manager that knows every hook of `ct_core.hookspecs` and holds no plugin yet."""
    return CTPluginManager()


def _normalize(name: str) -> str:
    # Distribution names compare case-insensitively with `-`, `_` and `.` equivalent (PEP 503).
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def allowed_plugins(environ: Mapping[str, str] | None = None) -> frozenset[str] | None:
    """Read `CT_PLUGINS`: None when unset (load everything), else the set of allowed names."""
    env = os.environ if environ is None else environ
    raw = env.get(ALLOW_ENV_VAR)
    if raw is None:
        return None
    return frozenset(_normalize(part) for part in raw.split(",") if part.strip())


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _record_failure(
    pm: CTPluginManager,
    name: str,
    exc: BaseException,
    what: str,
    detail: str | None = None,
    *,
    log_level: int = logging.WARNING,
) -> PluginLoadError:
    described = _describe(exc) if detail is None else detail
    failure = PluginLoadError(
        name=name,
        error=f"{what}: {described}",
        traceback="".join(traceback.format_exception(exc)),
    )
    pm.load_errors.append(failure)
    logger.log(log_level, "plugin %r %s: %s", name, what, described, exc_info=log_level < logging.INFO)
    return failure


def load_plugins(
    pm: CTPluginManager,
    allow: Collection[str] | None = None,
    *,
    entry_points: Iterable[PluginEntryPoint | metadata.EntryPoint] | None = None,
) -> list[str]:
    """Load the plugins published under the `ct` entry-point group into `pm`.

    :param pm: the manager to fill (from `new_plugin_manager()`).
    :param allow: names (entry-point or distribution) that may load; None reads `CT_PLUGINS`,
        which itself means "all" when unset. An empty collection loads nothing.
    :param entry_points: the entry points to consider (ours or `importlib.metadata`'s); defaults
        to the installed ones (`discover_entry_points()`).
    :returns: the names of the plugins that were registered by this call.

    A plugin that fails to import or to register is recorded in `pm.load_errors` and skipped.
    """
    allowed = allowed_plugins() if allow is None else frozenset(_normalize(name) for name in allow)
    pm.entry_points_loaded = True
    if allowed is not None and not allowed:
        return []
    candidates = discover_entry_points() if entry_points is None else entry_points
    loaded: list[str] = []
    for candidate in candidates:
        ep = (
            candidate
            if isinstance(candidate, PluginEntryPoint)
            else PluginEntryPoint.from_metadata(candidate)
        )
        if allowed is not None and not ({_normalize(ep.name), _normalize(ep.dist_name)} & allowed):
            continue
        if pm.has_plugin(ep.name) or ep.name in pm.sources:
            continue
        try:
            plugin = ep.load()
        except BaseException as exc:  # a plugin's import may fail in any way, SystemExit included
            if isinstance(exc, KeyboardInterrupt):
                raise
            _record_failure(pm, ep.name, exc, "failed to load")
            continue
        try:
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # pluggy's validation errors, or a name clash with another plugin
            _record_failure(pm, ep.name, exc, "failed to register")
            continue
        pm.sources[ep.name] = ep
        loaded.append(ep.name)
    return loaded


def register_builtin(pm: CTPluginManager, plugin: object, name: str) -> None:
    """Register a plugin that ships inside ct itself (kept out of `ct plugins` by default)."""
    if pm.has_plugin(name):
        return
    pm.register(plugin, name=name)
    pm.builtin_names.add(name)


_default_manager: CTPluginManager | None = None


def get_plugin_manager(
    command: str | None = None, *, builtin_commands: Collection[str] = ()
) -> CTPluginManager:
    """The process-wide manager: built and loaded (honouring `CT_PLUGINS`) on first use.

    :param command: the command a command line is about to run. Then only the plugins serving it
        load now: none for one of `builtin_commands`, the declaring distribution's for a command
        in the `ct.commands` metadata, every plugin for any other. The rest wait until a later call
        without `command`, which loads them into the same manager.
    """
    global _default_manager
    if _default_manager is None:
        pm = new_plugin_manager()
        if command is None:
            load_plugins(pm)
        else:
            found = _discover((ENTRY_POINT_GROUP, COMMANDS_GROUP), None)
            everything = found[ENTRY_POINT_GROUP]
            now: list[PluginEntryPoint] | None = (
                []
                if command in builtin_commands
                else plugins_for_command(command, everything, found[COMMANDS_GROUP])
            )
            if now is None:
                load_plugins(pm, entry_points=everything)
            else:
                load_plugins(pm, entry_points=now)
                pm.deferred = [ep for ep in everything if ep not in now]
        _default_manager = pm
    elif command is None and _default_manager.deferred is not None:
        deferred, _default_manager.deferred = _default_manager.deferred, None
        load_plugins(_default_manager, entry_points=deferred)
    return _default_manager


def reset_plugin_manager() -> None:
    """Forget the process-wide manager, so the next `get_plugin_manager()` loads afresh."""
    global _default_manager
    _default_manager = None


def call_each(pm: CTPluginManager, hook_name: str, **kwargs: Any) -> tuple[list[Any], list[PluginLoadError]]:
    """Call every implementation of one hook separately, so one failing plugin spares the rest.

    Implementations run in pluggy's order (most recently registered first, `tryfirst` /
    `trylast` honoured). A failure is recorded in `pm.load_errors` under the plugin's name and
    also returned; the results of the implementations that worked are returned as a list.
    """
    caller = getattr(pm.hook, hook_name)
    results: list[Any] = []
    failures: list[PluginLoadError] = []
    for impl in reversed(caller.get_hookimpls()):
        call: Callable[..., Any] = impl.function
        try:
            result = call(**{arg: kwargs[arg] for arg in impl.argnames})
        except Exception as exc:
            failures.append(_record_failure(pm, impl.plugin_name, exc, f"failed in {hook_name}"))
            continue
        if result is not None:
            results.append(result)
    return results, failures


# cyclopts names the clashing command in double quotes: `Command "x" already registered.`
_COLLISION_NAME_RE = re.compile(r'"([^"]+)"')


def _command_names(app: Any) -> set[str]:
    return {str(name) for name in app}


def register_commands(pm: CTPluginManager, app: Any) -> list[PluginLoadError]:
    """Run every `ct_register_commands` implementation on `app`, remembering who added what.

    This is `call_each` for the one hook where two plugins can collide: when a plugin asks for a
    command name that an earlier plugin (or a core command) already took, cyclopts refuses it, and
    the failure recorded for the late plugin names both plugins and the command, so the user
    knows which two installs disagree. A core command keeps its name. A name two installed plugins
    both claim is served by neither: running it is an error naming both (which one a user meant
    cannot be guessed, and the winner would depend on installation order). The late plugin's
    commands registered before the clash stay, the ones after it are lost.
    """
    owners: dict[str, str] = {}
    contested: dict[str, str] = {}
    failures: list[PluginLoadError] = []
    for impl in reversed(pm.hook.ct_register_commands.get_hookimpls()):
        before = _command_names(app)
        try:
            impl.function(**{arg: app for arg in impl.argnames})
        except Exception as exc:
            match = _COLLISION_NAME_RE.search(str(exc)) if "Collision" in type(exc).__name__ else None
            if match is None:
                failures.append(_record_failure(pm, impl.plugin_name, exc, "failed in ct_register_commands"))
            else:
                command = match.group(1)
                owner = owners.get(command, "ct (built in)")
                core = command not in owners or owners[command] in pm.builtin_names
                late = impl.plugin_name
                clash = f"command {command!r} is registered by both plugin {owner!r} and plugin {late!r}"
                remedy = f"uninstall one of them, or leave one out with {ALLOW_ENV_VAR}"
                outcome = f"{owner!r} keeps it" if core else "neither serves it"
                detail = f"{clash}; {outcome} ({remedy})"
                failures.append(
                    _record_failure(pm, impl.plugin_name, exc, "failed in ct_register_commands", detail)
                )
                if not core:
                    contested[command] = f"{clash}; {remedy}"
        for name in _command_names(app) - before:
            owners[name] = impl.plugin_name
    for command, message in contested.items():
        del app[command]
        app.command(_refusing_command(message), name=command, help=f"Unavailable: {message}.")
    return failures


def _refusing_command(message: str) -> Callable[..., None]:
    """A command that takes any arguments and fails with ``message`` (a contested name)."""
    from typing import Annotated

    from cyclopts import Parameter

    from ct_core.errors import CTError

    def contested(*tokens):  # type: ignore[no-untyped-def]
        raise CTError(message)

    # Real objects, not strings: this module's `from __future__ import annotations` would leave a
    # string that cyclopts resolves against module globals, where this local import is not.
    contested.__annotations__ = {
        "tokens": Annotated[str, Parameter(allow_leading_hyphen=True)],
        "return": None,
    }
    return contested


def missing_plugin_error(
    pm: CTPluginManager, *, needs: str, entry_point: str, distribution: str
) -> Exception:
    """The error for a feature no loaded plugin provides: why the plugin that would is absent.

    `needs` says what was asked for ("model deployments"); `entry_point` and `distribution` name
    the plugin that provides it. The reason is the first that applies: the plugin failed to load
    (its error), `CT_PLUGINS` leaves it out, or it is not installed (then what to install).
    """
    from ct_core.errors import MissingPluginError

    wanted = {_normalize(entry_point), _normalize(distribution)}
    failed = [failure for failure in pm.load_errors if _normalize(failure.name) in wanted]
    allowed = allowed_plugins()
    head = f"{needs} need the {distribution} plugin"
    if failed:
        reason = f"which failed to load: {failed[0].error}"
    elif allowed is not None and not wanted & allowed:
        value = os.environ.get(ALLOW_ENV_VAR, "")
        reason = f"which {ALLOW_ENV_VAR}={value!r} leaves out: add {entry_point} to it, or unset it"
    else:
        reason = f"which is not installed: pip install {distribution}"
    return MissingPluginError(f"{head}, {reason}")


def _flatten_problems(results: Iterable[Any]) -> list[str]:
    problems: list[str] = []
    for result in results:
        if isinstance(result, str):
            problems.append(result)
        elif result:
            problems.extend(str(problem) for problem in result)
    return problems


def _run_validators(manager: CTPluginManager, hook_name: str, kwargs: dict[str, Any]) -> list[object]:
    """Each implementation of a validator hook on its own, so one that raises spares the others.

    pluggy's own call stops at the first implementation that raises, which would drop every other
    plugin's problems (and normalizations) and surface a bare traceback without the culprit's name.
    Here a raise becomes one more problem: a `ValueError` reads as the plugin's own problem sentence
    (prefixed with the sub-job's location), anything else as `plugin 'NAME' failed in HOOK: Type:
    message`, also recorded in `load_errors` with its traceback. A failed validator thus still
    refuses the body; it is never silently skipped, since it may have been the one that normalizes it.
    """
    caller = getattr(manager.hook, hook_name)
    implementations = caller.get_hookimpls()
    if any(_is_wrapper(impl) for impl in implementations):
        # A wrapper needs pluggy's call protocol; such a plugin gets pluggy's semantics.
        return list(caller(**kwargs))
    results: list[object] = []
    # pluggy's own order: the last registered (or tryfirst) implementation runs first.
    for impl in reversed(implementations):
        try:
            result = impl.function(*[kwargs[name] for name in impl.argnames])
        except ValueError as exc:
            results.append([_located(kwargs, str(exc))])
            continue
        except Exception as exc:
            # DEBUG only: the problem below already names the plugin in the command's error.
            what = f"failed in {hook_name}"
            failure = _record_failure(manager, impl.plugin_name, exc, what, log_level=logging.DEBUG)
            results.append([_located(kwargs, f"plugin {impl.plugin_name!r} {failure.error}")])
            continue
        if result is not None:
            results.append(result)
    return results


def run_sub_job_validators(
    sub_job: dict[str, Any], location: str, pm: CTPluginManager | None = None
) -> list[str]:
    """Run every plugin's `ct_validate_sub_job` on one sub-job and return all their problems."""
    manager = get_plugin_manager() if pm is None else pm
    kwargs = {"sub_job": sub_job, "location": location}
    return _flatten_problems(_run_validators(manager, "ct_validate_sub_job", kwargs))


def run_create_body_validators(body: dict[str, Any], pm: CTPluginManager | None = None) -> list[str]:
    """Run every plugin's `ct_validate_create_body` on a body and return all their problems."""
    manager = get_plugin_manager() if pm is None else pm
    return _flatten_problems(_run_validators(manager, "ct_validate_create_body", {"body": body}))


def _distribution(pm: CTPluginManager, name: str) -> metadata.Distribution | None:
    source = pm.sources.get(name)
    if source is None:
        return None
    try:
        return source.distribution()
    except Exception:  # unreadable metadata must not break `ct plugins`
        return None


def _version_of(pm: CTPluginManager, name: str) -> str | None:
    dist = _distribution(pm, name)
    if dist is not None:
        return dist.version
    if name in pm.builtin_names:
        from ct_core.version import __version__

        return __version__
    return None


def plugin_info(pm: CTPluginManager, *, include_builtin: bool = False) -> list[dict[str, Any]]:
    """Describe the registered plugins as data: name, version, hooks (and distribution).

    This is what `ct plugins` prints. Built-in plugins are left out unless asked for.
    """
    info: list[dict[str, Any]] = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        if plugin is None or (name in pm.builtin_names and not include_builtin):
            continue
        dist = _distribution(pm, name)
        entry: dict[str, Any] = {
            "name": name,
            "version": _version_of(pm, name),
            "hooks": sorted(caller.name for caller in pm.get_hookcallers(plugin) or []),
            "builtin": name in pm.builtin_names,
        }
        if dist is not None:
            entry["distribution"] = dist.metadata["Name"]
        info.append(entry)
    return info
