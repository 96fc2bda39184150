"""DSSST1 wire benchmark: ct_core.wire against the reference cortex_training.wire, side by side.

Cases (issue 3): `dumps` / `loads` of an int64 batch and of a bf16 weights-like dict of many
tensors at 16 MiB, 256 MiB and 1 GiB; `encode_byte_chunks(max_bytes=60 MiB, force_chunk=True)` and
`decode_byte_chunks` of a frame of 64 MiB, 256 MiB and 1 GiB, and `decode_result_chunks` of result
chunks of the same frames. Every case runs in its own child process, which reports wall time and peak
RSS growth during the operation (Linux: VmHWM after resetting it through /proc/self/clear_refs).
Machine anchors are measured the same way over the same number of bytes: memcpy into touched memory,
a copy into a new bytes object (page faults included, which is what any fresh frame pays) and one
sha256 pass, so the distance to the physical limit shows.

The chunk cases also time one sha256 pass over their own input in the same child, alternating with
the operation (best of each), and the closing table gives our time against that pass with the
target: encode <= 1.25x, decode with verification <= 1.3x, peak <= 1.1x the payload. Taking the
anchor beside the operation keeps the ratio meaningful when other work shares the machine.

    python bench/wire.py                 # the issue's sizes
    python bench/wire.py --quick         # sizes / 16 (also CT_BENCH_QUICK=1)
    python bench/wire.py --sizes 16,64   # explicit sizes in MiB for every case
    python bench/wire.py --only chunk_encode,chunk_decode,result_decode --sizes 1024 --repeats 3
    python bench/wire.py --json out.json # also write the raw numbers

Timings are informative only; nothing here asserts on them.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reference_path import reference_on_path
from verdict import report

MIB = 1024 * 1024
CODEC_SIZES_MIB = (16, 256, 1024)
CHUNK_SIZES_MIB = (64, 256, 1024)
# The reference's request chunk limit: larger frames are sent as request chunks.
CHUNK_MAX_BYTES = 60 * MIB
WEIGHT_TENSOR_BYTES = 2 * MIB
QUICK_DIVISOR = 16
REPEATS_SMALL = 3  # cases under SMALL_BYTES take the best of this many runs
SMALL_BYTES = 64 * MIB
OPS = ("dumps", "loads", "chunk_encode", "chunk_decode", "result_decode")
# Our time over one sha256 pass of the same bytes, and peak RSS growth over the payload.
ONE_PASS_TARGETS = {"chunk_encode": 1.25, "chunk_decode": 1.3, "result_decode": 1.3}
PEAK_TARGET = 1.1
ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------
# Child side
# --------------------------------------------------------------------------------------------


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def _payload(kind: str, size: int) -> Any:
    import torch

    if kind == "batch":
        half = size // 16  # two int64 tensors of size/2 bytes each
        return {
            "input_ids": torch.arange(half, dtype=torch.int64).reshape(-1, 1024),
            "labels": torch.arange(half, dtype=torch.int64).reshape(-1, 1024),
        }
    count = max(1, size // WEIGHT_TENSOR_BYTES)
    width = WEIGHT_TENSOR_BYTES // 2 // 1024
    return {
        f"model.layers.{i}.mlp.weight": torch.full((1024, width), float(i % 7), dtype=torch.bfloat16)
        for i in range(count)
    }


def _module(impl: str) -> Any:
    if impl == "ours":
        from ct_core import wire
    else:
        reference_on_path()
        from cortex_training import wire  # type: ignore[no-redef]
    return wire


def _hash_all(buffers: list[Any]) -> bytes:
    hasher = hashlib.sha256()
    for buffer in buffers:
        hasher.update(buffer)
    return hasher.digest()


def run_child(impl: str, op: str, payload: str, size: int, repeats: int | None = None) -> dict[str, Any]:
    """Set up one case, then time the operation and measure the RSS growth it causes."""
    wire = _module(impl)
    ours = _module("ours")
    # What one sha256 pass over this case's input costs, timed beside the operation.
    anchor: Any = None
    if op in ("memcpy", "copy_new", "sha256"):
        import numpy as np

        source = np.ones(size, dtype=np.uint8)
        target = np.empty_like(source)
        target.fill(0)

        def action() -> Any:
            if op == "memcpy":
                np.copyto(target, source)  # into memory already touched: no page faults
                return None
            if op == "copy_new":
                return bytes(source.data)  # into a fresh bytes object, page faults included
            return hashlib.sha256(source.data).digest()

    elif op == "dumps":
        value = _payload(payload, size)

        def action() -> Any:
            return wire.dumps(value)

    elif op == "loads":
        frame = ours.dumps(_payload(payload, size))

        def action() -> Any:
            return wire.loads(frame)

    elif op == "chunk_encode":
        frame = ours.dumps(_payload(payload, size))

        def action() -> Any:
            return wire.encode_byte_chunks(frame, kind="request", max_bytes=CHUNK_MAX_BYTES, force_chunk=True)

        def anchor() -> Any:
            return hashlib.sha256(frame).digest()

    elif op in ("chunk_decode", "result_decode"):
        kind = "request" if op == "chunk_decode" else "result"
        frame = ours.dumps(_payload(payload, size))
        chunks = wire.encode_byte_chunks(frame, kind=kind, max_bytes=CHUNK_MAX_BYTES, force_chunk=True)
        del frame

        def action() -> Any:
            if op == "chunk_decode":
                return wire.decode_byte_chunks(chunks)
            return wire.decode_result_chunks(chunks)

        def anchor() -> Any:
            return _hash_all(chunks)

    else:
        raise SystemExit(f"unknown op {op}")

    if repeats is None:
        repeats = REPEATS_SMALL if size < SMALL_BYTES else 1
    best = best_anchor = float("inf")
    peak_kib = 0
    exact_peak = False
    for attempt in range(repeats):
        if anchor is not None:
            start = time.perf_counter()
            anchor()
            best_anchor = min(best_anchor, time.perf_counter() - start)
        gc.collect()
        exact_peak = _reset_peak()
        before = _rss_kib("VmRSS")
        start = time.perf_counter()
        result = action()
        elapsed = time.perf_counter() - start
        if attempt == 0:
            peak_kib = _rss_kib("VmHWM") - before
        best = min(best, elapsed)
        del result
    report = {"seconds": best, "peak_extra_bytes": peak_kib * 1024, "exact_peak": exact_peak, "bytes": size}
    if anchor is not None:
        report["sha256_seconds"] = best_anchor
    return report


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------


def _spawn(impl: str, op: str, payload: str, size: int, repeats: int | None = None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", impl, op, payload, str(size)]
    if repeats is not None:
        command += ["--repeats", str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if result.returncode != 0:
        return {"error": (result.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _fmt_rate(run: dict[str, Any]) -> str:
    if "error" in run:
        return "error"
    return f"{run['bytes'] / MIB / run['seconds']:8.0f}"


def _fmt_peak(run: dict[str, Any]) -> str:
    if "error" in run:
        return "  -  "
    return f"{run['peak_extra_bytes'] / run['bytes']:5.2f}x"


def _cases(codec_sizes: list[int], chunk_sizes: list[int], only: set[str]) -> list[tuple[str, str, int]]:
    cases = []
    for payload in ("batch", "weights"):
        for size in codec_sizes:
            cases += [("dumps", payload, size), ("loads", payload, size)]
    for size in chunk_sizes:
        cases += [
            ("chunk_encode", "batch", size),
            ("chunk_decode", "batch", size),
            ("result_decode", "batch", size),
        ]
    return [case for case in cases if case[0] in only]


def _print_one_pass(results: list[dict[str, Any]]) -> None:
    """Our chunk timings against one sha256 pass over the same bytes, timed in the same child."""
    rows = [r for r in results if r["op"] in ONE_PASS_TARGETS and "sha256_seconds" in r["ours"]]
    if not rows:
        return
    print()
    print(
        f"one sha256 pass (timed beside each case), targets: time <= the figure shown, peak <= {PEAK_TARGET}x"
    )
    header = f"{'case':<14}{'MiB':>6} | {'ours s':>8}{'sha256 s':>9} | {'ratio':>6}{'target':>7}"
    header += f" | {'peak':>6}  met"
    print(header)
    print("-" * len(header))
    for row in rows:
        ours = row["ours"]
        ratio = ours["seconds"] / ours["sha256_seconds"]
        peak = ours["peak_extra_bytes"] / ours["bytes"]
        target = ONE_PASS_TARGETS[row["op"]]
        met = "yes" if ratio <= target and peak <= PEAK_TARGET else "NO"
        print(
            f"{row['op']:<14}{row['mib']:>6} | {ours['seconds']:8.3f}{ours['sha256_seconds']:9.3f}"
            f" | {ratio:5.2f}x{target:6.2f}x | {peak:5.2f}x  {met}"
        )
    print()
    for row in rows:
        ours = row["ours"]
        what = f"{row['op']} {row['mib']} MiB"
        target = ONE_PASS_TARGETS[row["op"]]
        report(
            f"{what} time", ours["seconds"] / ours["sha256_seconds"], "one sha256 pass", target, at_most=True
        )
        peak = ours["peak_extra_bytes"] / ours["bytes"]
        report(f"{what} peak memory", peak, "the payload", PEAK_TARGET, at_most=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="divide every size by 16")
    parser.add_argument("--sizes", help="comma-separated sizes in MiB, used for every case")
    parser.add_argument("--json", type=Path, help="also write the raw results to this file")
    parser.add_argument(
        "--only", help=f"comma-separated cases to run (of {','.join(OPS)}); anchors always run"
    )
    parser.add_argument(
        "--repeats", type=int, help="best of this many runs for every case (default: 3 under 64 MiB, else 1)"
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="time ours only (the one-pass table needs no more)"
    )
    parser.add_argument(
        "--child", nargs=4, metavar=("IMPL", "OP", "PAYLOAD", "BYTES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        impl, op, payload, size = args.child
        print(json.dumps(run_child(impl, op, payload, int(size), args.repeats)))
        return 0
    only = set(OPS) if not args.only else {name.strip() for name in args.only.split(",")}
    unknown = only - set(OPS)
    if unknown:
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; choose from {', '.join(OPS)}")

    if args.sizes:
        codec = chunk = [int(s) for s in args.sizes.split(",")]
    else:
        quick = args.quick or os.environ.get("CT_BENCH_QUICK") == "1"
        divisor = QUICK_DIVISOR if quick else 1
        codec = [s // divisor for s in CODEC_SIZES_MIB]
        chunk = [s // divisor for s in CHUNK_SIZES_MIB]

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f};"
        " child process per case"
    )
    print("MB/s = MiB of payload per second; peak = RSS growth during the call / payload size")
    anchors: dict[int, dict[str, Any]] = {}
    cases = _cases(codec, chunk, only)
    for size_mib in sorted({case[2] for case in cases}):
        size = size_mib * MIB
        anchors[size_mib] = {op: _spawn("ours", op, "raw", size) for op in ("memcpy", "copy_new", "sha256")}
        line = ", ".join(
            f"{op} {_fmt_rate(run).strip()} MB/s ({run.get('seconds', 0):.3f} s)"
            for op, run in anchors[size_mib].items()
        )
        print(f"anchor {size_mib:5d} MiB: {line}")
    header = (
        f"{'case':<14}{'payload':<9}{'MiB':>6} | {'ours s':>8}{'ref s':>8} | {'ours MB/s':>9}{'ref MB/s':>9}"
        f" | {'ours pk':>8}{'ref pk':>8} | {'ours/ref':>8}{'speedup':>8}"
    )
    print(header)
    print("-" * len(header))
    results = []
    for op, payload, size_mib in cases:
        size = size_mib * MIB
        ours = _spawn("ours", op, payload, size, args.repeats)
        ref = (
            {"error": "not run"}
            if args.no_reference
            else _spawn("reference", op, payload, size, args.repeats)
        )
        ratio = speedup = "   -"
        if "error" not in ours and "error" not in ref:
            ratio = f"{ours['seconds'] / ref['seconds']:8.2f}"
            speedup = f"{ref['seconds'] / ours['seconds']:7.1f}x"
        print(
            f"{op:<14}{payload:<9}{size_mib:>6} | {ours.get('seconds', float('nan')):8.3f}"
            f"{ref.get('seconds', float('nan')):8.3f} | {_fmt_rate(ours):>9}{_fmt_rate(ref):>9}"
            f" | {_fmt_peak(ours):>8}{_fmt_peak(ref):>8} | {ratio:>8}{speedup:>8}",
            flush=True,
        )
        for name, run in (("ours", ours), ("reference", ref)):
            if "error" in run and not (name == "reference" and args.no_reference):
                print(f"    {name} failed: {run['error']}")
        results.append({"op": op, "payload": payload, "mib": size_mib, "ours": ours, "reference": ref})
    _print_one_pass(results)
    if args.json:
        args.json.write_text(json.dumps({"anchors": anchors, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
