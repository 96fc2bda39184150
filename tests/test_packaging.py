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
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

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


def _run(command: list[str | Path], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], capture_output=True, text=True, timeout=120, check=False, **kwargs
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
    assert claimants == {name: {"ct": ENTRY_POINT} for name in LAUNCHERS}
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
