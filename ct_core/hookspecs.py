"""Every hook a ct plugin can implement, in one place.

A plugin is a module (or object) whose functions are decorated with `hookimpl` and named after
one of the specs below. Plugins are found through the entry-point group `ct` and loaded by
`ct_core.plugins`; this module only declares the contract and imports nothing heavy, so the
CLI can read it on every start.

Call semantics (pluggy): every implementation of a hook is called, the most recently
registered first, and the non-None results are collected into a list. Validators therefore
return a list of problems instead of raising, so one error message can name them all. The two
validator hooks are each called one implementation at a time (see `ct_core.plugins`): a
`ValueError` a validator raises counts as its problem, any other exception as a problem naming
the plugin, and in both cases the other plugins' validators still run. `ct_model_deployments` is
the exception to collecting: its first non-None result is the answer (`firstresult`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import cyclopts

#: The pluggy project name; also the entry-point group plugins are published under.
PROJECT_NAME = "ct"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def ct_register_commands(app: cyclopts.App) -> None:
    """Add commands or command groups to the `ct` command line.

    Called once per CLI start, after the plugin entry points are loaded and before the
    command line is parsed, so a plugin's commands appear in `ct --help`.

    Register commands lazily by import path (`app.command("my_plugin.cli:app", name="mine",
    help="...")`) so that `ct --help` does not import the plugin's heavy dependencies; give
    `help=` because a lazy command's docstring is only read when it runs.

    :param app: the root cyclopts application of `ct`.
    :returns: nothing; the hook works by mutating `app`.
    """


@hookspec
def ct_validate_sub_job(sub_job: dict[str, Any], location: str) -> list[str] | None:
    """Check, and optionally normalize, one entry of a create-job body's `sub_job_configs`.

    Called by `ct_core.config.validation.validate_create_body` for every sub-job of every create
    path (`create_job`, `create_job_from_body`, `ct submit` and `ct submit --dry-run`), after
    the built-in checks of the create-job contract and on a copy of the caller's body; the local
    server calls it too (`ct_core.config.bodies.plugin_problems`) on a copy of a posted body, and
    answers 400 with the problems returned.

    :param sub_job: the sub-job config; an implementation may rewrite it in place (for
        example to normalize a `peft_config`), and the rewritten dict is what gets sent.
    :param location: where the sub-job sits in the body, such as `sub_job_configs[1]`.
    :returns: a list of problems, each a sentence starting with `location` (for example
        `sub_job_configs[1].peft_config.r: must be a positive integer`), or None / an empty
        list when the sub-job is acceptable to this plugin.
    """


@hookspec
def ct_validate_create_body(body: dict[str, Any]) -> list[str] | None:
    """Check, and optionally normalize, a whole create-job body.

    Called by `ct_core.config.validation.validate_create_body` once per body, after every sub-job
    has gone through `ct_validate_sub_job`, for rules that span sub-jobs or concern the
    top-level fields (for example a plugin that needs a matching training and sampling pair).
    The local server calls it the same way on a copy of each posted create body.

    :param body: the create-job body (a copy of the caller's); may be rewritten in place.
    :returns: a list of problems, each naming the field it is about, or None / an empty list
        when the body is acceptable to this plugin.
    """


@hookspec
def ct_local_services(state_dir: str, settings: Any) -> Any:
    """Offer a service that runs inside `ct local serve`, with REST routes of its own.

    Called once when the local server builds its app. Return None to add nothing, or an object
    with three members, and optional ones (see docs/plugins.md, "Services inside the local server"):

    - `routes() -> list[starlette.routing.BaseRoute]`: the routes to serve; they are matched before
      the server's own, so a path such as `{prefix}/runs` is not read as a job id. Each handler
      checks the caller itself (the server's `ct_local.http.context.caller_identity`).
    - `start(base_url: str) -> None`: called once the server listens, with its own base URL, so
      the service can drive Cortex Training jobs on this very server through ct_core.
    - `stop() -> None`: called when the server shuts down, before its store closes.
    - `use_request_waiter(wait) -> None` (optional): called just before `start` with the server's
      `wait(request_id, seconds) -> bool`, which returns once a data-plane request of this server
      ended (True) or after `seconds` (False); pass it to the service's clients (their
      `request_waiter`) so results are read when ready instead of polled over loopback.
    - `use_in_process_road(road) -> None` (optional): called just before `start` with the server's
      way in without a socket (a `ct_core.http.pool.Road`); pass it to the service's clients (their
      `road`) so their requests run the server's app directly, skipping HTTP's bytes.

    :param state_dir: the server's state directory; a service keeps its files in a folder of its
        own under it.
    :param settings: the server's `ct_local.settings.ServerSettings`. Its tokens let a service
        sign the calls it makes to this server as a caller's role; never print or store them.
    :returns: the service object, or None to add nothing.
    """


@hookspec
def ct_tui_screens() -> list[Any] | None:
    """Add screens to `ct tui`.

    Each entry describes one screen (a `ct_cli.tui.screens.ScreenEntry`: a name, a key that opens
    it from the job picker, a title and a factory building the Textual screen from the app's
    client). Screens must stay read-only, as the rest of `ct tui`. Called when `ct tui` starts,
    only then, so Textual is never imported for other commands.

    :returns: a list of screen entries, or None.
    """


@hookspec(firstresult=True)
def ct_model_deployments(client: Any) -> Any:
    """Give an SDK client its model-deployment methods.

    Called each time code asks a `CortexTrainingClient` for them: `client.model_deployments`, or one
    of the facade's methods under the contract's names (`client.create_model_deployment(spec)`,
    `list_model_deployments`, `describe_model_deployment`, `get_model_deployment`,
    `wait_for_model_deployment`, `drop_model_deployment`, `download_model_deployment_logs`,
    `download_model_deployment_metrics`, `model_deployment_base_url`), which forward to the object
    returned here. The first implementation that returns something wins. The ct-model-deployment
    plugin implements it; without any, each of those methods raises `MissingPluginError` naming
    that plugin, so ct itself never imports a plugin.

    :param client: the client the methods act for; use its public members only.
    :returns: an object with the methods above bound to `client` (docs/model-deployments.md), or
        None to offer none.
    """
