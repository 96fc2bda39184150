"""A job's screen: the log screen with a tab bar, and the Resources and Training tabs beside the logs.

`JobScreen` is the log screen (`screens.logs.LogScreen`, whose keys and tail it keeps as they
are) with three tabs: `1` Logs, `2` Resources, `3` Training. The tabs are mounted next to the log
pane once the screen is built; switching hides one and shows the other, so the live tail keeps
running while a chart is on screen. On the Resources tab `v` / `V` change the view; on the
Training tab `t` switches the table between steps and calls; `u` downloads the tab's rows again.

The log screen warms the job's artifact session (once per screen), so the first metrics download
of these tabs starts with its listing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Input, Tab, Tabs

from ct_cli.tui.screens.logs import LogScreen
from ct_cli.tui.screens.resources import ResourcesPane
from ct_cli.tui.screens.training import TrainingPane

#: The tabs, in order: (name, label).
TABS = (("logs", "Logs"), ("resources", "Resources"), ("training", "Training"))


class JobScreen(LogScreen):
    """One job: its logs, Resources and Training, as tabs. Strictly read-only."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show_tab('logs')", "Logs"),
        Binding("2", "show_tab('resources')", "Resources"),
        Binding("3", "show_tab('training')", "Training"),
        Binding("v", "cycle_view(1)", "View", show=False),
        Binding("V", "cycle_view(-1)", "View back", show=False),
        Binding("t", "toggle_calls", "Steps/calls", show=False),
        Binding("u", "update_tab", "Update", show=False),
    ]

    def __init__(
        self,
        job_id: str,
        *,
        status: Any = None,
        sub_job_id: str | None = None,
        client: Any = None,
    ) -> None:
        # `client`: the job's own location (a job found by the account-wide search); the log
        # screen's `job_client` is what the tail and the metrics tabs read with.
        super().__init__(job_id, status=status, sub_job_id=sub_job_id, client=client)
        self.tab = "logs"

    # --- building the tabs --------------------------------------------------------------------

    def on_mount(self) -> None:
        log = self.query_one("#log")
        body = log.parent if isinstance(log.parent, Widget) and log.parent is not self else log
        self._body = body
        tabs = Tabs(*(Tab(label, id=f"tab-{name}") for name, label in TABS), id="job-tabs")
        tabs.can_focus = False
        self.mount(tabs, before=body)
        self.resources = ResourcesPane(self)
        self.training = TrainingPane(self)
        self.mount(self.training, after=body)
        self.mount(self.resources, after=body)
        self.resources.display = False
        self.training.display = False

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tabs.id == "job-tabs" and event.tab.id:
            self._switch(event.tab.id.removeprefix("tab-"))

    def action_show_tab(self, name: str) -> None:
        self.query_one("#job-tabs", Tabs).active = f"tab-{name}"
        self._switch(name)

    def _switch(self, name: str) -> None:
        if name == self.tab and name != "logs":
            return
        self.tab = name
        self._body.display = name == "logs"
        for box in self.query("#log-filter").results(Input):
            box.display = name == "logs"
        self.resources.display = name == "resources"
        self.training.display = name == "training"
        if name == "resources":
            self.resources.activate()
            self.resources.focus()
        elif name == "training":
            self.training.activate()
            self.training.query_one("#training-table").focus()
        else:
            self.query_one("#log").focus()

    # --- keys of the metric tabs --------------------------------------------------------------

    def action_cycle_view(self, step: int) -> None:
        if self.tab == "resources":
            self.resources.cycle_view(step)

    def action_toggle_calls(self) -> None:
        if self.tab == "training":
            self.training.toggle_calls()

    def action_update_tab(self) -> None:
        pane = (
            self.resources if self.tab == "resources" else self.training if self.tab == "training" else None
        )
        if pane is not None and not pane.fetching:
            pane.load()

    # --- what the panes need from the job -----------------------------------------------------

    def first_source(self) -> str | None:
        """The sub-job shown first: the log screen's, else the job's first."""
        if self.source:
            return self.source
        return self.sources[0][0] if self.sources else self.only_sub_job

    def training_source(self) -> str | None:
        """The training sub-job to show: the log screen's when it is one, else the first one."""
        training = [sub for sub, _ in self.sources if sub.split(":")[-2:-1] == ["training"]]
        if self.source in training:
            return self.source
        if training:
            return training[0]
        return self.only_sub_job

    def scoped_sub_jobs(self) -> list[str] | None:
        """`--sub-job-id` limits the downloads too; otherwise every sub-job is read."""
        return [self.only_sub_job] if self.only_sub_job else None

    def download_dir(self, kind: str) -> Path:
        folder = Path(self.tui.stage_dir(self.job_id)) / kind
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder
