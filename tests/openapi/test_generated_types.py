"""The generated package type-checks under mypy --strict, ct's transport and client are what its
operations ask for (``ct_api.types.Transport``), and a wrong argument or body key is a type error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
GENERATED = REPO_ROOT / "generated"

PROBE = """
from ct_api.api import control_plane, data_plane, local
from ct_api.types import Transport
from ct_core.client import CortexTrainingClient
from ct_core.http.transport import Transport as CoreTransport


def use(core: CoreTransport, client: CortexTrainingClient) -> str:
    transport: Transport = core
    through_client: Transport = client
    job = control_plane.get_job(transport, job_id="j")
    data_plane.step(through_client, job_id="j", body={"learning_rate": 1e-4})
    with local.get_local_artifact(transport, experiment_name="e", run_name="r", artifact_path="a") as answer:
        blocks = list(answer.iter_bytes())
    return job["status"] + str(len(blocks))


def misuse(transport: Transport) -> None:
    control_plane.get_job(transport, job_id=1)  # expected error
    data_plane.step(transport, job_id="j", body={"learning_rate": "fast"})  # expected error
"""

CONFIG = """
[mypy]
python_version = 3.11
strict = True
[mypy-ct_core.*,ct_local.*,ct_cli.*]
ignore_errors = True
follow_imports = silent
"""


@pytest.mark.slow
def test_generated_package_type_checks_and_fits_ct_transport(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE.lstrip("\n"), encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(CONFIG, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(GENERATED / "ct_api"),
            str(tmp_path / "probe.py"),
        ],
        cwd=REPO_ROOT,
        env={"MYPYPATH": str(GENERATED), "PATH": str(Path(sys.executable).parent)},
        capture_output=True,
        text=True,
        check=False,
    )
    errors = sorted(line for line in done.stdout.splitlines() if ": error:" in line)
    expected = [
        str(number)
        for number, line in enumerate(PROBE.lstrip("\n").splitlines(), start=1)
        if line.endswith("# expected error")
    ]
    assert [line.split(": error:")[0].rsplit(":", 1)[-1] for line in errors] == expected, done.stdout
    assert '"job_id" to "get_job" has incompatible type "int"' in errors[0]
    assert 'TypedDict item "learning_rate" has type "float"' in errors[1]
