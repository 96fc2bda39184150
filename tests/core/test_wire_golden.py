"""Golden DSSST1 frames: our writer must keep producing exactly the committed bytes.

Refresh with `python tests/fixtures/wire/refresh.py` after an intended format change.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from ct_core import wire

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"ct_wire_fixture_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


refresh = _load("refresh")
cases = _load("cases")
GOLDEN = refresh.golden_files()
CASES = cases.golden_cases()


def test_golden_folder_matches_the_cases() -> None:
    on_disk = sorted(p.name for p in FIXTURES.glob(f"*{refresh.FRAME_SUFFIX}"))
    assert on_disk == sorted(GOLDEN), "run `python tests/fixtures/wire/refresh.py`"


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_writer_reproduces_golden_bytes(name: str) -> None:
    assert (FIXTURES / name).read_bytes() == GOLDEN[name], (
        f"{name} changed; if intended, run `python tests/fixtures/wire/refresh.py`"
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_golden_frames_decode(name: str, backend: str) -> None:
    value, metadata = CASES[name]
    frame = (FIXTURES / f"{name}{refresh.FRAME_SUFFIX}").read_bytes()
    decoded = wire.loads(frame, backend="numpy")
    cases.assert_same(decoded, value)
    if backend == "torch":
        pytest.importorskip("torch")
        torch_value = wire.loads(frame, backend="torch")
        assert type(torch_value) is type(decoded)
    assert wire.read_metadata(frame) == (metadata or {})


def test_golden_chunks_reassemble() -> None:
    request = [(FIXTURES / n).read_bytes() for n in sorted(GOLDEN) if n.startswith("request_chunk_")]
    assert len(request) > 1
    assert wire.decode_byte_chunks(request[::-1], kind="request") == GOLDEN["batch_int64.dssst1"]
    desc = wire.read_byte_chunk_metadata(request[0])
    assert desc is not None
    assert desc["chunk_group_id"] == cases.GOLDEN_GROUP_ID
    assert desc["operation"] == "fwd-bwd"
    result = [(FIXTURES / n).read_bytes() for n in sorted(GOLDEN) if n.startswith("result_chunk_")]
    cases.assert_same(wire.decode_result_chunks(result, backend="numpy"), CASES["weights_bf16"][0])


def test_reference_decodes_golden_frames() -> None:
    pytest.importorskip("torch")
    reference = pytest.importorskip("cortex_training.wire")
    frame = (FIXTURES / "batch_int64.dssst1").read_bytes()
    value = reference.loads(frame)
    assert value["input_ids"].tolist() == CASES["batch_int64"][0]["input_ids"].tolist()
    assert value["meta"] == ("a", 1, [2.5, None])
    collided = reference.loads((FIXTURES / "key_collision.dssst1").read_bytes())
    assert collided["a.b"].tolist() == [1] and collided["a"]["b"].tolist() == [2]
