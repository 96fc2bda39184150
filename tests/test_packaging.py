"""ct owns its launchers: the reference client next to it never replaces or deletes `ct` / `cortex-training`.

The reference cortex-training 0.0.3 declares console scripts of the same two names. `make venv` keeps
it out of .venv (pip installs it with `--target` into .venv/reference, without its requirements,
which the dev extra brings), and pytest's `pythonpath` setting puts that folder on sys.path so the
interoperability tests import it. These tests check the venv as it is (no distribution but ct claims
the two launchers, and both run ct) and install and uninstall the reference in a throwaway venv of its
own, from the wheel `make venv` keeps, offline, to see that ct's launchers are left exactly as they were.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import random
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until
from packaging.requirements import Requirement

from ct_core import __version__

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DIR = ROOT / ".venv" / "reference"
REFERENCE_WHEELS = ROOT / ".venv" / "reference-wheels"
REFERENCE = "cortex-training==0.0.3"
LAUNCHERS = ("ct", "cortex-training")
ENTRY_POINT = "ct_cli.main:main"
BIN = Path(sys.executable).parent


def _venv_distributions() -> list[importlib.metadata.Distribution]:
    """The distributions installed in the running venv itself (not the folders pytest adds to sys.path)."""
    paths = sysconfig.get_paths()
    folders = sorted({paths["purelib"], paths["platlib"]})
    return list(importlib.metadata.distributions(path=folders))


def _snapshot() -> dict[str, tuple[bytes, int]]:
    return {name: ((BIN / name).read_bytes(), (BIN / name).stat().st_mtime_ns) for name in LAUNCHERS}


def _run(
    command: list[str | Path], *, timeout_s: float = 120, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        **kwargs,
    )


def _assert_launchers_run_ct() -> None:
    for name in LAUNCHERS:
        launcher = BIN / name
        assert "from ct_cli.main import main" in launcher.read_text(), launcher
        result = _run([launcher, "--version"], env=dict(os.environ))
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == __version__


def test_no_distribution_but_ct_declares_the_ct_and_cortex_training_launchers() -> None:
    claimants: dict[str, dict[str, str]] = {name: {} for name in LAUNCHERS}
    for dist in _venv_distributions():
        for entry in dist.entry_points.select(group="console_scripts"):
            if entry.name in claimants:
                claimants[entry.name][dist.metadata["Name"]] = entry.value
    # The core distribution holds the launchers; `ct` (ct-core plus the plugins) holds no code.
    assert claimants == {name: {"ct-core": ENTRY_POINT} for name in LAUNCHERS}
    names = {dist.metadata["Name"].lower() for dist in _venv_distributions()}
    assert "cortex-training" not in names


def test_the_venvs_ct_and_cortex_training_launchers_run_ct(ct_home: Path) -> None:
    _assert_launchers_run_ct()


def test_the_reference_is_imported_from_its_own_folder_with_its_requirements_met() -> None:
    import cortex_training

    assert Path(cortex_training.__file__).resolve().is_relative_to(REFERENCE_DIR.resolve())
    # Its launchers went to its own folder, not next to ct's.
    assert (REFERENCE_DIR / "bin" / "ct").is_file()
    reference = importlib.metadata.distribution("cortex-training")
    assert reference.version == "0.0.3"
    installed = {dist.metadata["Name"].lower(): dist.version for dist in _venv_distributions()}
    unmet = []
    for line in reference.requires or []:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an extra of the reference (its own dev tools)
        version = installed.get(requirement.name.lower())
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            unmet.append(f"{line} (installed: {version})")
    assert unmet == [], "the dev extra must bring these requirements of the reference"


def test_installing_and_uninstalling_the_reference_in_its_own_venv_leaves_ct_launchers(
    tmp_path: Path, ct_home: Path
) -> None:
    wheels = sorted(REFERENCE_WHEELS.glob("cortex_training-0.0.3-*.whl"))
    assert wheels, f"no reference wheel in {REFERENCE_WHEELS}: run `make venv`"
    venv = tmp_path / "reference-venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv])
    assert made.returncode == 0, made.stderr
    # pip of this venv installs into the other one (`--python`), offline from the kept wheel.
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "--disable-pip-version-check"]
    before = _snapshot()

    installed = _run(
        [*pip, "install", "-q", "--no-deps", "--no-index", "--find-links", wheels[0].parent, REFERENCE]
    )
    assert installed.returncode == 0, installed.stderr
    assert "cortex_training" in (venv / "bin" / "ct").read_text()
    assert _snapshot() == before

    removed = _run([*pip, "uninstall", "-q", "-y", "cortex-training"])
    assert removed.returncode == 0, removed.stderr
    assert not (venv / "bin" / "ct").exists() and not (venv / "bin" / "cortex-training").exists()
    assert _snapshot() == before
    _assert_launchers_run_ct()


# --- installed from wheels ------------------------------------------------------------------------
#
# Every distribution of the repository is built as a wheel and installed, without its requirements,
# into a fresh virtual environment outside the checkout. Those requirements (torch, starlette, dbos,
# ...) are already in .venv: a `.pth` line lends the new environment .venv's site-packages, where
# ct's own packages are editable installs whose path files a lent folder never runs, so every
# module of ct and its plugins can only come from the wheels. Then `ct` runs from a folder of its
# own as a user's would: the catalog, the local server, a job, a managed run and a deployment.

#: The distributions this repository builds: (project folder, distribution name).
PROJECTS = (
    ROOT,
    ROOT / "packaging" / "ct",
    *(path.parent for path in sorted((ROOT / "ct_plugins").glob("*/pyproject.toml"))),
)
#: A hang of a build, an install or a command ends the test after this long (never reached normally).
STEP_TIMEOUT_S = 600
DB = "WHEEL_DB"
MODEL = "Qwen/Qwen3-0.6B"


def _dist_name(folder: Path) -> str:
    import tomllib

    return str(tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"])


def _wheel_requirements(wheel: Path) -> tuple[str, list[Requirement]]:
    """A wheel's distribution name and its requirements outside any extra."""
    import email.parser
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = (name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        message = email.parser.Parser().parsestr(archive.read(metadata).decode("utf-8"))
    required = [Requirement(line) for line in message.get_all("Requires-Dist") or []]
    plain = [req for req in required if req.marker is None or req.marker.evaluate({"extra": ""})]
    return str(message["Name"]), plain


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every wheel of the repository, built offline with .venv's hatchling: name -> wheel file."""
    folder = tmp_path_factory.mktemp("wheels")
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--wheel-dir",
            folder,
            *PROJECTS,
        ],
        timeout_s=STEP_TIMEOUT_S,
    )
    assert built.returncode == 0, built.stderr
    found = {_wheel_requirements(wheel)[0]: wheel for wheel in folder.glob("*.whl")}
    assert set(found) == {_dist_name(project) for project in PROJECTS}
    return found


def _venv_with(folder: Path, wheels: list[Path]) -> Path:
    """A fresh venv in `folder` holding `wheels` (no requirements) and lent .venv's other packages."""
    made = _run([sys.executable, "-m", "venv", "--without-pip", folder])
    assert made.returncode == 0, made.stderr
    python = folder / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    assert purelib.returncode == 0, purelib.stderr
    site = Path(purelib.stdout.strip())
    # The wheels first: once .venv's packages are lent, pip would take ct's editable installs there
    # for installed copies and skip the wheels of the same versions.
    installed = _run(
        [
            *(sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"),
            *("install", "-q", "--no-deps", "--no-index", *wheels),
        ],
        timeout_s=STEP_TIMEOUT_S,
    )
    assert installed.returncode == 0, installed.stderr
    names = {_wheel_requirements(wheel)[0].replace("-", "_") for wheel in wheels}
    assert {info.name.split("-")[0] for info in site.glob("*.dist-info")} == names
    lent = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site / "lent-from-dot-venv.pth").write_text("\n".join(lent) + "\n", encoding="utf-8")
    return python


def _user_env(home: Path) -> dict[str, str]:
    """A user's environment: no setting of ours, of Python's search path or of a connection."""
    ours = ("CT_", "CORTEX_TRAINING_", "SNOWFLAKE_", "PYTHON")
    env = {key: value for key, value in os.environ.items() if not key.startswith(ours)}
    return {**env, "HOME": str(home), "COLUMNS": "100"}


def test_plugins_depend_on_ct_core_and_ct_on_both_without_a_cycle(wheels: dict[str, Path]) -> None:
    requires = {name: {req.name for req in _wheel_requirements(wheel)[1]} for name, wheel in wheels.items()}
    plugins = {name for name in requires if name not in ("ct", "ct-core")}
    assert plugins, "no plugin was built"
    for plugin in plugins:
        assert "ct-core" in requires[plugin], plugin
        assert "ct" not in requires[plugin], plugin
    assert requires["ct"] >= {"ct-core", *plugins}
    assert not requires["ct-core"] & set(requires), "ct-core must not require ct or a plugin"


@pytest.mark.slow
def test_ct_installed_from_wheels_runs_outside_the_checkout(
    wheels: dict[str, Path], tmp_path: Path, ct_home: Path
) -> None:
    python = _venv_with(tmp_path / "venv", list(wheels.values()))
    ct = str(python.with_name("ct"))
    work = tmp_path / "work"
    work.mkdir()
    env = _user_env(ct_home)

    def run_ct(*args: str) -> subprocess.CompletedProcess[str]:
        return _run([ct, *args], env=env, cwd=work, timeout_s=STEP_TIMEOUT_S)

    where = _run(
        [
            python,
            "-c",
            "import ct_core, ct_runs, ct_model_deployment as m; print(ct_core.__file__, m.__file__)",
        ],
        env=env,
        cwd=work,
    )
    assert where.returncode == 0, where.stderr
    assert all(Path(path).is_relative_to(tmp_path / "venv") for path in where.stdout.split()), where.stdout

    helped = run_ct("--help")
    assert helped.returncode == 0, helped.stderr
    for command in (" runs ", " datasets ", " model-deployment ", " capacity ", " lora "):
        assert command in helped.stdout, command

    catalog = run_ct("catalog", "list")
    assert catalog.returncode == 0, catalog.stderr
    assert "Qwen/Qwen3-8B" in catalog.stdout

    ready = tmp_path / "ready.json"
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(
            [ct, "local", "serve", "--port", "0", "--state-dir", tmp_path / "state", "--ready-file", ready],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=work,
        )
    try:
        _wait_for_file(ready, server, tmp_path / "server.log")
        base_url = json.loads(ready.read_text(encoding="utf-8"))["base_url"]
        connection = ["--base-url", base_url, "--database", DB, "--poll-interval", "0.1"]
        _a_job(run_ct, connection, work)
        _a_managed_run(run_ct, connection, work)
        _a_deployment(run_ct, connection, work)
    finally:
        server.terminate()
        try:
            server.wait(STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _wait_for_file(path: Path, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the server writes its ready file; its exit or a hang fails with its log."""

    def written() -> bool:
        assert process.poll() is None, log.read_text(encoding="utf-8", errors="replace")
        return path.exists()

    wait_until(
        written,
        timeout=STEP_TIMEOUT_S,
        interval=0.1,
        message=lambda: log.read_text(encoding="utf-8", errors="replace"),
    )


def _a_job(run_ct: Any, connection: list[str], work: Path) -> None:
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": MODEL,
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": 0.0001},
                    "max_seq_len": 512,
                    "train_batch_size": 2,
                    "n_gpus": 1,
                },
            }
        ],
        "hardware": "H200",
    }
    (work / "job.json").write_text(json.dumps(body), encoding="utf-8")
    submitted = run_ct(*connection, "submit", "job.json", "--wait")
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job_id"]
    listed = run_ct(*connection, "list")
    assert listed.returncode == 0, listed.stderr
    assert job_id in {job["job_id"] for job in json.loads(listed.stdout)["jobs"]}


def _a_managed_run(run_ct: Any, connection: list[str], work: Path) -> None:
    # Random 14-word rows over 40 words share no 5-word run, so the near-duplicate gate keeps them.
    rng = random.Random(7)
    words = [f"{stem}{n}" for stem in ("sky", "sea", "oak", "elm") for n in range(10)]
    rows = [{"text": " ".join(rng.choice(words) for _ in range(14))} for _ in range(60)]
    (work / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    built = run_ct(*connection, "datasets", "build", "corpus.jsonl", "--wait")
    assert built.returncode == 0, built.stderr
    spec = {
        "dataset_id": json.loads(built.stdout)["dataset_id"],
        "overrides": {"max_seq_len": 128},
        "trainer": {"epochs": 1, "batch_tokens": 512, "checkpoint_every_steps": 5},
    }
    (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    run = run_ct(*connection, "runs", "start", "spec.json", "--wait")
    # Exit 0 only when the run succeeded (a run's jobs read the catalog this installation ships).
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["status"] == "succeeded"


def _a_deployment(run_ct: Any, connection: list[str], work: Path) -> None:
    spec = {
        "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
        "source": {"type": "base_model", "model": MODEL},
        "inference": {"max_seq_len": 256},
    }
    (work / "deployment.json").write_text(json.dumps(spec), encoding="utf-8")
    created = run_ct(*connection, "model-deployment", "create", "deployment.json", "--wait")
    assert created.returncode == 0, created.stderr
    name = json.loads(created.stdout)["deployment"]
    listed = run_ct(*connection, "model-deployment", "list")
    assert listed.returncode == 0, listed.stderr
    assert name in {item["deployment"] for item in json.loads(listed.stdout)["deployments"]}


@pytest.mark.slow
def test_ct_core_alone_is_ct_without_the_plugins_commands(
    wheels: dict[str, Path], tmp_path: Path, ct_home: Path
) -> None:
    python = _venv_with(tmp_path / "venv", [wheels["ct-core"]])
    ct = str(python.with_name("ct"))
    env = _user_env(ct_home)
    work = tmp_path / "work"
    work.mkdir()
    helped = _run([ct, "--help"], env=env, cwd=work)
    assert helped.returncode == 0, helped.stderr
    assert " submit " in helped.stdout and " catalog " in helped.stdout
    assert " runs " not in helped.stdout and " model-deployment " not in helped.stdout
    catalog = _run([ct, "catalog", "list"], env=env, cwd=work)
    assert catalog.returncode == 0, catalog.stderr
    assert "Qwen/Qwen3-8B" in catalog.stdout
    runs = _run([ct, "runs", "--help"], env=env, cwd=work)
    assert runs.returncode == 2 and "unknown command: runs" in runs.stderr
