"""Plugin hooks and loading: real plugin modules, real dist-info metadata, the real `ct` script.

Third-party plugins are simulated the way pip leaves them on disk: a module plus a
`<name>-<version>.dist-info` folder with METADATA and entry_points.txt, on sys.path (or
PYTHONPATH for subprocesses). The slow test builds the example plugin of the repo
(examples/ct-plugin-hello) into a wheel and pip-installs it into a temporary venv.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from ct_core import hookspecs, plugins
from ct_core.errors import CTError

REPO = Path(__file__).resolve().parents[2]
CT_SCRIPT = Path(sys.executable).with_name("ct")

GOOD_PLUGIN = '''
"""A tiny third-party ct plugin used by the tests."""
from ct_core.hookspecs import hookimpl


@hookimpl
def ct_register_commands(app):
    app.command("{module}_cmd:hello", name="hello-{module}", help="Say hello from {module}.")


@hookimpl
def ct_validate_sub_job(sub_job, location):
    if sub_job.get("model_name") == "forbidden":
        return [f"{{location}}.model_name: {module} refuses this model"]
    sub_job.setdefault("seen_by", []).append("{module}")
    return None


@hookimpl
def ct_validate_create_body(body):
    if body.get("comment") == "bad":
        return ["comment: {module} refuses this comment"]
    return []
'''

GOOD_COMMAND = '''
"""The command module of the test plugin, imported only when the command runs."""
import json
import sys


def hello(name: str = "world") -> None:
    """Greet NAME as JSON."""
    sys.stdout.write(json.dumps({{"hello": name, "from": "{module}"}}) + "\\n")
'''


def write_plugin_dist(
    root: Path,
    module: str,
    *,
    version: str = "1.2.3",
    dist_name: str | None = None,
    body: str | None = None,
    entry_name: str | None = None,
) -> None:
    """Lay out a plugin as an installed distribution: module(s) plus a dist-info with an entry point."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(body if body is not None else GOOD_PLUGIN.format(module=module))
    (root / f"{module}_cmd.py").write_text(GOOD_COMMAND.format(module=module))
    dist = dist_name or module.replace("_", "-")
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[ct]\n{entry_name or module} = {module}\n")


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A sys.path folder holding a good plugin, a plugin that fails to import and one with a bad hook."""
    root = tmp_path / "site"
    write_plugin_dist(root, "ct_good_plugin", dist_name="ct-good-plugin")
    write_plugin_dist(root, "ct_broken_plugin", body="raise ImportError('needs a missing library')\n")
    write_plugin_dist(
        root,
        "ct_badhook_plugin",
        body=(
            "from ct_core.hookspecs import hookimpl\n\n"
            "@hookimpl\n"
            "def ct_validate_sub_job(sub_job, where):\n"
            "    return None\n"
        ),
    )
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv(plugins.ALLOW_ENV_VAR, raising=False)
    for name in ("ct_good_plugin", "ct_broken_plugin", "ct_badhook_plugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return root


def _entry_points_under(root: Path) -> list[Any]:
    """The `ct` entry points published by distributions in `root` only (ignores installed ones)."""
    from importlib import metadata

    found = []
    for dist in metadata.distributions(path=[str(root)]):
        found.extend(ep for ep in dist.entry_points if ep.group == plugins.ENTRY_POINT_GROUP)
    return found


def _loaded(root: Path, allow: Any = None) -> plugins.CTPluginManager:
    pm = plugins.new_plugin_manager()
    plugins.load_plugins(pm, allow, entry_points=_entry_points_under(root))
    return pm


# --- the hook specifications -------------------------------------------------------------------


def _hook_names() -> list[str]:
    return sorted(
        name
        for name, value in vars(hookspecs).items()
        if inspect.isfunction(value) and hasattr(value, hookspecs.PROJECT_NAME + "_spec")
    )


def test_every_hook_is_prefixed_documented_and_tested() -> None:
    names = _hook_names()
    assert {"ct_register_commands", "ct_validate_sub_job", "ct_validate_create_body"} <= set(names)
    this_module = sys.modules[__name__]
    for name in names:
        assert name.startswith("ct_")
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        has_params = bool(inspect.signature(getattr(hookspecs, name)).parameters)
        assert ":returns:" in doc and (":param" in doc or not has_params), (
            f"{name} lacks a parameter/return docstring"
        )
        # Datasette's rule: every hook has a test named after it.
        assert hasattr(this_module, f"test_hook_{name}"), f"no test_hook_{name}"


def _signature_text(name: str) -> str:
    """`name(param: annotation, ...) -> return`, as written in hookspecs.py (annotations are strings)."""
    signature = inspect.signature(getattr(hookspecs, name))
    params = ", ".join(f"{param.name}: {param.annotation}" for param in signature.parameters.values())
    return f"{name}({params}) -> {signature.return_annotation}"


def test_every_hook_is_documented_with_its_signature() -> None:
    docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    headings = {line.strip() for line in docs.splitlines() if line.startswith("### `")}
    for name in _hook_names():
        assert f"### `{_signature_text(name)}`" in headings, (
            f"docs/plugins.md lacks `{_signature_text(name)}`"
        )
    # ...and documents no hook that does not exist.
    documented = {line.removeprefix("### `").split("(", 1)[0] for line in headings if "(" in line}
    assert documented == set(_hook_names())


def test_new_plugin_manager_knows_every_hook_and_holds_nothing() -> None:
    pm = plugins.new_plugin_manager()
    for name in _hook_names():
        assert getattr(pm.hook, name).get_hookimpls() == []
    assert pm.list_name_plugin() == []
    assert pm.load_errors == []


# --- hooks --------------------------------------------------------------------------------------


class _Normalizer:
    """A plugin object that rewrites a field in place and reports a problem for another."""

    @hookspecs.hookimpl
    def ct_validate_sub_job(self, sub_job: dict[str, Any], location: str) -> list[str] | None:
        if "peft_config" in sub_job:
            sub_job["peft_config"] = {**sub_job["peft_config"], "normalized": True}
        if sub_job.get("n_gpus") == -1:
            return [f"{location}.n_gpus: must be positive"]
        return None


class _Second:
    @hookspecs.hookimpl
    def ct_validate_sub_job(self, sub_job: dict[str, Any], location: str) -> list[str]:
        return [f"{location}: second plugin always complains"]

    @hookspecs.hookimpl
    def ct_validate_create_body(self, body: dict[str, Any]) -> list[str]:
        body["touched"] = True
        return ["body: second plugin complains", "body: twice"]


def test_hook_ct_validate_sub_job() -> None:
    pm = plugins.new_plugin_manager()
    pm.register(_Normalizer(), name="normalizer")
    pm.register(_Second(), name="second")
    sub_job = {"peft_config": {"r": 8}, "n_gpus": -1}
    problems = plugins.run_sub_job_validators(sub_job, "sub_job_configs[0]", pm)
    # Every plugin runs and every problem is reported, each with its location.
    assert sorted(problems) == [
        "sub_job_configs[0].n_gpus: must be positive",
        "sub_job_configs[0]: second plugin always complains",
    ]
    assert sub_job["peft_config"] == {"r": 8, "normalized": True}


def test_hook_ct_validate_create_body() -> None:
    pm = plugins.new_plugin_manager()
    assert plugins.run_create_body_validators({"sub_job_configs": []}, pm) == []
    pm.register(_Second(), name="second")
    body: dict[str, Any] = {"sub_job_configs": []}
    assert plugins.run_create_body_validators(body, pm) == ["body: second plugin complains", "body: twice"]
    assert body["touched"] is True


class _Raises:
    """A buggy validator plugin: a KeyError in one hook, a ValueError (a problem, raised) in the other."""

    @hookspecs.hookimpl
    def ct_validate_sub_job(self, sub_job: dict[str, Any], location: str) -> list[str]:
        return [sub_job["missing"]]

    @hookspecs.hookimpl
    def ct_validate_create_body(self, body: dict[str, Any]) -> list[str]:
        raise ValueError("body: comment must be polite")


def test_a_raising_validator_is_named_and_spares_the_other_plugins() -> None:
    pm = plugins.new_plugin_manager()
    pm.register(_Normalizer(), name="normalizer")
    pm.register(_Raises(), name="ct-buggy")
    pm.register(_Second(), name="second")
    sub_job = {"peft_config": {"r": 8}, "n_gpus": -1}
    problems = plugins.run_sub_job_validators(sub_job, "sub_job_configs[0]", pm)
    # The plugins registered before and after the buggy one still ran (and normalized).
    assert sorted(problems) == [
        "sub_job_configs[0].n_gpus: must be positive",
        "sub_job_configs[0]: plugin 'ct-buggy' failed in ct_validate_sub_job: KeyError: 'missing'",
        "sub_job_configs[0]: second plugin always complains",
    ]
    assert sub_job["peft_config"] == {"r": 8, "normalized": True}
    (failure,) = pm.load_errors
    assert failure.name == "ct-buggy"
    assert failure.error == "failed in ct_validate_sub_job: KeyError: 'missing'"
    assert "KeyError" in failure.traceback
    # A ValueError is the plugin's own problem sentence, not a failure of the plugin.
    body: dict[str, Any] = {"sub_job_configs": []}
    assert sorted(plugins.run_create_body_validators(body, pm)) == [
        "body: comment must be polite",
        "body: second plugin complains",
        "body: twice",
    ]
    assert body["touched"] is True and len(pm.load_errors) == 1


def test_a_raising_validator_refuses_the_body_on_the_sdk_create_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from ct_core.config import bodies, validation
    from ct_core.errors import ValidationError

    pm = plugins.new_plugin_manager()
    pm.register(_Raises(), name="ct-buggy")
    pm.register(_Second(), name="second")
    monkeypatch.setattr(bodies, "_plugin_manager", lambda: pm)
    body = {
        "sub_job_configs": [{"job_type": "sampling", "model_name": "m", "inference_config": {"n_gpus": 1}}]
    }
    with pytest.raises(ValidationError) as caught:
        validation.validate_create_body(body)
    message = str(caught.value)
    assert (
        "sub_job_configs[0]: plugin 'ct-buggy' failed in ct_validate_sub_job: KeyError: 'missing'" in message
    )
    assert "sub_job_configs[0]: second plugin always complains" in message
    assert "body: comment must be polite" in message and "body: second plugin complains" in message


def test_a_raising_validator_on_submit_dry_run_is_an_error_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "site"
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def ct_validate_sub_job(sub_job, location):\n"
        "    return [location + ': ' + sub_job['no_such_key']]\n"
    )
    write_plugin_dist(root, "ct_crashy_plugin", body=body)
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps({"sub_job_configs": [{"job_type": "sampling", "model_name": "m", "inference_config": {}}]})
    )
    run = _run_ct(["submit", str(job), "--dry-run"], root, CT_PLUGINS="ct_crashy_plugin")
    assert run.returncode == 1
    assert "plugin 'ct_crashy_plugin' failed in ct_validate_sub_job: KeyError: 'no_such_key'" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_hook_ct_register_commands() -> None:
    from cyclopts import App

    calls: list[str] = []

    class Adds:
        @hookspecs.hookimpl
        def ct_register_commands(self, app: App) -> None:
            calls.append("adds")
            app.command("json:dumps", name="dump", help="lazy, never imported here")

    class Fails:
        @hookspecs.hookimpl
        def ct_register_commands(self, app: App) -> None:
            calls.append("fails")
            raise RuntimeError("boom")

    pm = plugins.new_plugin_manager()
    pm.register(Adds(), name="adds")
    pm.register(Fails(), name="fails")
    app = App(name="t")
    results, failures = plugins.call_each(pm, "ct_register_commands", app=app)
    # The failing plugin (registered last, so called first) does not stop the other one.
    assert calls == ["fails", "adds"]
    assert results == []
    assert "dump" in app
    assert [f.name for f in failures] == ["fails"]
    assert failures[0].error == "failed in ct_register_commands: RuntimeError: boom"
    assert pm.load_errors == failures


def test_two_plugins_registering_one_command_name_is_an_error_naming_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from cyclopts import App

    def adder(*names: str) -> object:
        class Adds:
            @hookspecs.hookimpl
            def ct_register_commands(self, app: App) -> None:
                for name in names:
                    app.command("json:dumps", name=name, help=f"{name} command")

        return Adds()

    pm = plugins.new_plugin_manager()
    # pluggy calls the most recently registered first: ct.core (standing in for the built-in
    # commands, which ct registers last) runs first, then ct-hello, ct-howdy, ct-status-too.
    pm.register(adder("status"), name="ct-status-too")
    pm.register(adder("bye", "hello", "later"), name="ct-howdy")
    pm.register(adder("hello", "wave"), name="ct-hello")
    plugins.register_builtin(pm, adder("status"), "ct.core")
    app = App(name="t")
    with caplog.at_level("WARNING", logger="ct_core.plugins"):
        failures = plugins.register_commands(pm, app)
    errors = {failure.name: failure.error for failure in failures}
    assert errors == {
        "ct-howdy": (
            "failed in ct_register_commands: command 'hello' is registered by both plugin 'ct-hello' and "
            "plugin 'ct-howdy'; neither serves it (uninstall one of them, or leave one out with CT_PLUGINS)"
        ),
        "ct-status-too": (
            "failed in ct_register_commands: command 'status' is registered by both plugin 'ct.core' and "
            "plugin 'ct-status-too'; 'ct.core' keeps it (uninstall one of them, or leave one out with "
            "CT_PLUGINS)"
        ),
    }
    assert pm.load_errors == failures
    assert "CommandCollisionError" in failures[0].traceback
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "'ct-hello' and plugin 'ct-howdy'" in logged
    # A core command keeps its name; a name two plugins claim is served by neither and fails naming
    # both. The late plugin keeps what it added before the clash.
    assert app["status"].help == "status command"
    assert app["hello"].help.startswith(
        "Unavailable: command 'hello' is registered by both plugin 'ct-hello' and plugin 'ct-howdy'"
    )
    with pytest.raises(CTError, match="registered by both plugin 'ct-hello' and plugin 'ct-howdy'"):
        app(["hello", "--any", "thing"], exit_on_error=False)
    assert {"status", "hello", "wave", "bye"} <= set(app)
    assert "later" not in app


def test_register_commands_records_other_failures_plainly() -> None:
    from cyclopts import App

    class Fails:
        @hookspecs.hookimpl
        def ct_register_commands(self, app: App) -> None:
            raise RuntimeError('boom "quoted"')

    pm = plugins.new_plugin_manager()
    pm.register(Fails(), name="fails")
    (failure,) = plugins.register_commands(pm, App(name="t"))
    assert failure.error == 'failed in ct_register_commands: RuntimeError: boom "quoted"'


# --- loading ------------------------------------------------------------------------------------


def test_load_plugins_survives_broken_plugins_and_names_them(
    plugin_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="ct_core.plugins"):
        pm = _loaded(plugin_dir)
    assert pm.has_plugin("ct_good_plugin")
    assert not pm.has_plugin("ct_broken_plugin")
    assert not pm.has_plugin("ct_badhook_plugin")
    errors = {failure.name: failure.error for failure in pm.load_errors}
    assert errors["ct_broken_plugin"] == "failed to load: ImportError: needs a missing library"
    # A hook with a parameter the spec does not have is refused by pluggy at registration.
    assert errors["ct_badhook_plugin"].startswith("failed to register: PluginValidationError")
    assert "where" in errors["ct_badhook_plugin"]
    assert "Traceback" in pm.load_errors[0].traceback
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "'ct_broken_plugin' failed to load" in logged
    # The good plugin works.
    sub_job: dict[str, Any] = {"model_name": "forbidden"}
    problems = plugins.run_sub_job_validators(sub_job, "sub_job_configs[0]", pm)
    assert problems == ["sub_job_configs[0].model_name: ct_good_plugin refuses this model"]


def test_discovery_matches_importlib_metadata(plugin_dir: Path) -> None:
    from importlib import metadata

    ours = plugins.discover_entry_points(path=[str(plugin_dir)])
    assert sorted((ep.name, ep.value) for ep in ours) == sorted(
        (ep.name, ep.value) for ep in _entry_points_under(plugin_dir)
    )
    good = next(ep for ep in ours if ep.name == "ct_good_plugin")
    assert good.dist_name == "ct-good-plugin" and good.distribution().version == "1.2.3"
    # Over the whole environment too: the same entry points as importlib.metadata finds.
    installed = {(ep.name, ep.value) for ep in metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)}
    assert {(ep.name, ep.value) for ep in plugins.discover_entry_points()} == installed


def test_entry_point_values_with_attributes_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ct_attr_plugin.py").write_text("class Holder:\n    class Inner:\n        marker = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = plugins.PluginEntryPoint(name="attr", value="ct_attr_plugin:Holder.Inner")
    assert ep.load().marker == 42
    assert ep.distribution() is None


def test_plugin_info_reports_name_version_hooks(plugin_dir: Path) -> None:
    pm = _loaded(plugin_dir)
    info = plugins.plugin_info(pm)
    assert info == [
        {
            "name": "ct_good_plugin",
            "version": "1.2.3",
            "hooks": ["ct_register_commands", "ct_validate_create_body", "ct_validate_sub_job"],
            "builtin": False,
            "distribution": "ct-good-plugin",
        }
    ]
    json.dumps(info)  # plain data, ready for `ct plugins`


def test_builtin_plugins_are_hidden_unless_asked_for() -> None:
    pm = plugins.new_plugin_manager()
    plugins.register_builtin(pm, _Second(), "ct.second")
    plugins.register_builtin(pm, _Second(), "ct.second")  # idempotent
    assert plugins.plugin_info(pm) == []
    (entry,) = plugins.plugin_info(pm, include_builtin=True)
    assert entry["name"] == "ct.second" and entry["builtin"] is True
    assert entry["hooks"] == ["ct_validate_create_body", "ct_validate_sub_job"]


@pytest.mark.parametrize(
    ("allow", "expected"),
    [
        ("", set()),
        ("ct_good_plugin", {"ct_good_plugin"}),
        ("CT-Good-Plugin", {"ct_good_plugin"}),  # distribution name, PEP 503 comparison
        (" ct_good_plugin , nothing_like_it ", {"ct_good_plugin"}),
        ("ct_broken_plugin", set()),
    ],
)
def test_ct_plugins_env_limits_loading(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch, allow: str, expected: set[str]
) -> None:
    monkeypatch.setenv(plugins.ALLOW_ENV_VAR, allow)
    pm = _loaded(plugin_dir)
    assert {name for name, _ in pm.list_name_plugin()} == expected
    # Plugins left out are not imported at all, so they cannot fail either.
    assert {failure.name for failure in pm.load_errors} <= expected | {"ct_broken_plugin"}
    if "ct_broken_plugin" not in allow:
        assert pm.load_errors == []


def test_allow_argument_overrides_environment(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(plugins.ALLOW_ENV_VAR, "")
    pm = _loaded(plugin_dir, allow=["ct_good_plugin"])
    assert pm.has_plugin("ct_good_plugin")
    assert plugins.allowed_plugins({}) is None
    assert plugins.allowed_plugins({"CT_PLUGINS": ""}) == frozenset()
    assert plugins.allowed_plugins({"CT_PLUGINS": "a_b,C"}) == frozenset({"a-b", "c"})


def test_same_entry_point_name_twice_is_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_plugin_dist(first, "ct_twin_a", entry_name="twin")
    write_plugin_dist(second, "ct_twin_b", entry_name="twin")
    sys.path[:0] = [str(first), str(second)]
    try:
        pm = plugins.new_plugin_manager()
        loaded = plugins.load_plugins(
            pm, entry_points=_entry_points_under(first) + _entry_points_under(second)
        )
    finally:
        sys.path.remove(str(first))
        sys.path.remove(str(second))
        sys.modules.pop("ct_twin_a", None)
        sys.modules.pop("ct_twin_b", None)
    assert loaded == ["twin"]


def test_get_plugin_manager_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(plugins.ALLOW_ENV_VAR, "")
    plugins.reset_plugin_manager()
    try:
        pm = plugins.get_plugin_manager()
        assert plugins.get_plugin_manager() is pm
        assert pm.entry_points_loaded
        plugins.reset_plugin_manager()
        assert plugins.get_plugin_manager() is not pm
    finally:
        plugins.reset_plugin_manager()


def test_importing_the_plugin_modules_loads_nothing() -> None:
    code = (
        "import sys, ct_core.plugins, ct_core.hookspecs;"
        "assert ct_core.plugins._default_manager is None;"
        "assert 'cyclopts' not in sys.modules and 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --- the real command line ----------------------------------------------------------------------


def _run_ct(args: list[str], pythonpath: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(pythonpath), "COLUMNS": "100", **env}
    environment.pop(plugins.ALLOW_ENV_VAR, None)
    environment.update(env)
    return subprocess.run(
        [str(CT_SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=120, check=False
    )


def test_third_party_plugin_appears_in_ct_help_and_ct_plugins(plugin_dir: Path) -> None:
    help_run = _run_ct(["--help"], plugin_dir)
    assert help_run.returncode == 0, help_run.stderr
    assert "hello-ct_good_plugin" in help_run.stdout
    assert "Say hello from ct_good_plugin." in help_run.stdout
    # The broken ones are named on stderr, and the command line still works.
    assert "warning: plugin 'ct_broken_plugin' failed to load: ImportError" in help_run.stderr
    assert "ct_badhook_plugin" in help_run.stderr

    listing = _run_ct(["plugins"], plugin_dir)
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    names = [entry["name"] for entry in data["plugins"]]
    assert "ct_good_plugin" in names
    good = next(entry for entry in data["plugins"] if entry["name"] == "ct_good_plugin")
    assert good["version"] == "1.2.3"
    assert good["hooks"] == ["ct_register_commands", "ct_validate_create_body", "ct_validate_sub_job"]
    assert {error["name"] for error in data["errors"]} >= {"ct_broken_plugin", "ct_badhook_plugin"}

    hello = _run_ct(["hello-ct_good_plugin", "--name", "ct"], plugin_dir)
    assert hello.returncode == 0, hello.stderr
    assert json.loads(hello.stdout) == {"hello": "ct", "from": "ct_good_plugin"}


def test_a_plugin_taking_a_core_command_name_is_named_with_the_owner(tmp_path: Path) -> None:
    root = tmp_path / "site"
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def ct_register_commands(app):\n"
        "    app.command('json:dumps', name='submit', help='Not the real submit.')\n"
    )
    write_plugin_dist(root, "ct_greedy_plugin", body=body)
    run = _run_ct(["--help"], root)
    assert run.returncode == 0, run.stderr
    assert (
        "warning: plugin 'ct_greedy_plugin' failed in ct_register_commands: command 'submit' is registered "
        "by both plugin 'ct.commands' and plugin 'ct_greedy_plugin'"
    ) in run.stderr
    assert "Not the real submit." not in run.stdout
    data = json.loads(_run_ct(["plugins"], root).stdout)
    assert [error["name"] for error in data["errors"]] == ["ct_greedy_plugin"]


def test_ct_plugins_env_hides_a_plugin_from_the_command_line(plugin_dir: Path) -> None:
    run = _run_ct(["--help"], plugin_dir, CT_PLUGINS="")
    assert run.returncode == 0
    assert "hello-ct_good_plugin" not in run.stdout
    assert "warning" not in run.stderr
    listing = _run_ct(["plugins", "--all"], plugin_dir, CT_PLUGINS="")
    data = json.loads(listing.stdout)
    assert data["errors"] == []
    assert [entry["name"] for entry in data["plugins"]] == ["ct.commands"]


def test_plugin_validators_run_on_submit_dry_run(plugin_dir: Path, tmp_path: Path) -> None:
    body = {
        "sub_job_configs": [{"job_type": "sampling", "model_name": "forbidden", "inference_config": {}}],
        "comment": "bad",
    }
    job = tmp_path / "job.json"
    job.write_text(json.dumps(body))
    run = _run_ct(["submit", str(job), "--dry-run"], plugin_dir, CT_PLUGINS="ct_good_plugin")
    assert run.returncode == 1
    assert "ct_good_plugin refuses this model" in run.stderr
    assert "ct_good_plugin refuses this comment" in run.stderr


EXAMPLE_PLUGIN = REPO / "examples" / "ct-plugin-hello"


def _pip(*args: str) -> None:
    # The repo venv's pip drives the temporary venv through --python, so that venv needs no pip.
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, timeout=300, capture_output=True)


@pytest.mark.slow
def test_example_plugin_wheel_round_trip(tmp_path: Path) -> None:
    """Build examples/ct-plugin-hello into a wheel, pip-install it into a fresh venv, use it, uninstall it.

    The venv is made without pip and sees this environment's packages (ct included) through a .pth
    file, which is far faster than installing ct and its dependencies into it; the plugin itself is
    installed only there, so the repo's environment is never touched.
    """
    if shutil.which("pip", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("pip is not available in this environment")
    # The wheel is built offline (--no-build-isolation), with the build backend of this environment.
    pytest.importorskip("setuptools", reason="building the example wheel needs setuptools installed")
    wheels = tmp_path / "wheels"
    source = tmp_path / "src"
    # Build from a copy: setuptools leaves build/ and *.egg-info folders next to the sources.
    shutil.copytree(
        EXAMPLE_PLUGIN, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    _pip(
        "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(wheels), str(source)
    )
    (wheel,) = wheels.glob("ct_plugin_hello-0.1.0-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    parent = sysconfig.get_path("purelib")
    (Path(site_packages) / "_ct_parent_env.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    _pip("--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel))

    def ct(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "COLUMNS": "120"}
        env.pop(plugins.ALLOW_ENV_VAR, None)
        env.pop("PYTHONPATH", None)
        return subprocess.run(
            [str(python), "-m", "ct_cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    listed = ct("--help")
    assert listed.returncode == 0, listed.stderr
    assert "Example plugin commands: greet, policy." in listed.stdout
    data = json.loads(ct("--compact", "plugins").stdout)
    hello = next(entry for entry in data["plugins"] if entry["name"] == "hello")
    assert hello == {
        "name": "hello",
        "version": "0.1.0",
        "hooks": ["ct_register_commands", "ct_validate_sub_job"],
        "builtin": False,
        "distribution": "ct-plugin-hello",
    }
    assert json.loads(ct("hello", "greet", "--name", "wheel").stdout) == {"greeting": "hello, wheel"}
    body = json.loads((REPO / "examples" / "job.json").read_text())
    body["sub_job_configs"][0]["training_config"]["n_gpus"] = 12
    job = tmp_path / "job.json"
    job.write_text(json.dumps(body))
    refused = ct("submit", str(job), "--dry-run")
    assert refused.returncode == 1
    assert "training_config.n_gpus: ct-hello allows at most 8 GPUs per sub-job, got 12" in refused.stderr

    # The example's own tests pass against the installed wheel (they use ct's shared fixtures).
    own_tests = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(source / "pyproject.toml"),
            str(source / "tests"),
        ],
        capture_output=True,
        text=True,
        cwd=source,
        timeout=300,
        check=False,
    )
    assert own_tests.returncode == 0, own_tests.stdout[-3000:] + own_tests.stderr[-2000:]

    _pip("--python", str(python), "uninstall", "--quiet", "--yes", "ct-plugin-hello")
    gone = ct("--help")
    assert gone.returncode == 0, gone.stderr
    assert "Example plugin commands" not in gone.stdout
    assert "hello" not in [
        entry["name"] for entry in json.loads(ct("--compact", "plugins").stdout)["plugins"]
    ]


def test_hook_ct_local_services(tmp_path: Path) -> None:
    """A service's routes come before the server's own, and it starts and stops with the server.

    The runs service's tests (ct_plugins/runs/tests) exercise the same hook on a real server.
    """
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from ct_local.app import create_app, plugin_services, start_services
    from ct_local.settings import ServerSettings

    events: list[str] = []

    class Service:
        def routes(self) -> list[Route]:
            async def hello(request: Any) -> JSONResponse:
                return JSONResponse({"from": "service", "schema": request.path_params["schema"]})

            # Without the ordering, GET {prefix}/hello would be read as the job "hello".
            return [Route("/api/v2/databases/{database}/schemas/{schema}/{endpoint}/hello", hello)]

        def start(self, base_url: str) -> None:
            events.append(f"start {base_url}")

        def stop(self) -> None:
            events.append("stop")

    class Offers:
        @hookspecs.hookimpl
        def ct_local_services(self, state_dir: str, settings: Any) -> Any:
            events.append(f"offered in {Path(state_dir).name}")
            return Service()

    class Declines:
        @hookspecs.hookimpl
        def ct_local_services(self, state_dir: str, settings: Any) -> Any:
            return None

    class Fails:
        @hookspecs.hookimpl
        def ct_local_services(self, state_dir: str, settings: Any) -> Any:
            raise RuntimeError("boom")

    pm = plugins.new_plugin_manager()
    for plugin, name in ((Offers(), "offers"), (Declines(), "declines"), (Fails(), "fails")):
        pm.register(plugin, name=name)
    settings = ServerSettings(state_dir=tmp_path / "state")
    services = plugin_services(settings, pm)
    assert len(services) == 1 and events == ["offered in state"]
    app, state = create_app(settings, services=services)
    with TestClient(app) as http:
        start_services(state, "http://127.0.0.1:1")
        answer = http.get("/api/v2/databases/DB/schemas/S1/cortex-training/hello")
        assert answer.status_code == 200 and answer.json() == {"from": "service", "schema": "S1"}
        # The server's own routes still answer around it.
        assert http.get("/api/v2/databases/DB/schemas/S1/cortex-training/some-job").status_code == 404
    assert events == ["offered in state", "start http://127.0.0.1:1", "stop"]


def test_hook_ct_tui_screens() -> None:
    """A plugin's screens join the built-in ones; a failing or clashing plugin is left out, named."""
    from ct_cli.tui.screens import ScreenEntry, collect_entries

    def factory(client: Any) -> Any:
        raise AssertionError("not built here: this test only collects the entries")

    class Adds:
        @hookspecs.hookimpl
        def ct_tui_screens(self) -> list[Any]:
            return [ScreenEntry("x", "x", "X", factory)]

    class Clashes:
        @hookspecs.hookimpl
        def ct_tui_screens(self) -> list[Any]:
            # The built-in deployments screen owns the key `d` already.
            return [ScreenEntry("mine", "d", "Mine", factory)]

    class Fails:
        @hookspecs.hookimpl
        def ct_tui_screens(self) -> list[Any]:
            raise RuntimeError("boom")

    pm = plugins.new_plugin_manager()
    for plugin, name in ((Adds(), "adds"), (Clashes(), "clashes"), (Fails(), "fails")):
        pm.register(plugin, name=name)
    collected = collect_entries(pm)
    assert [entry.name for entry in collected.entries] == ["deployments", "runs", "x"]
    problems = " ".join(str(p) for p in collected.problems)
    assert "fails" in problems and "mine" in problems


def test_hook_ct_model_deployments(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client's deployment methods come from the plugin that implements the hook; every facade
    method forwards its arguments; without such a plugin, each names the one to install."""
    from ct_core.client import CortexTrainingClient
    from ct_core.errors import MissingPluginError

    class Methods:
        def __init__(self, client: Any) -> None:
            self.client = client

        def list_model_deployments(self, statuses: Any = None, *, on_malformed: Any = None) -> list[Any]:
            return [statuses, on_malformed]

        def create_model_deployment(self, spec: Any) -> dict[str, Any]:
            return {"created": spec}

    class Offers:
        @hookspecs.hookimpl
        def ct_model_deployments(self, client: Any) -> Any:
            return Methods(client)

    monkeypatch.setenv(plugins.ALLOW_ENV_VAR, "")
    plugins.reset_plugin_manager()
    try:
        pm = plugins.get_plugin_manager()
        # Never contacted: nothing here sends a request.
        with CortexTrainingClient(base_url="http://127.0.0.1:9", database="D", schema="S") as client:
            with pytest.raises(MissingPluginError, match="ct-model-deployment") as caught:
                client.create_model_deployment({"spec": 1})
            assert isinstance(caught.value, ImportError)
            assert f"{plugins.ALLOW_ENV_VAR}=''" in str(caught.value)
            pm.register(Offers(), name="offers")
            assert client.model_deployments.client is client
            assert client.create_model_deployment({"spec": 1}) == {"created": {"spec": 1}}

            def note(problem: dict[str, str]) -> None:
                raise AssertionError("not called by this stand-in")

            assert client.list_model_deployments(["READY"], on_malformed=note) == [["READY"], note]
    finally:
        plugins.reset_plugin_manager()
