"""Download benchmarks (issue 6): stdout reconstruction and checkpoint throughput.

1. Stdout reconstruction of N gzip chunks (500 by default) where every LIST/GET takes 20 ms, as a
   stage round trip does: ct_core's parallel download (16 GETs at once, one session, ordered
   appends) against the reference cortex-training 0.0.3, which fetches one chunk after another.
   Both read the same directory tree through the same stand-in Connector session (cursor
   interface, fixed latency per statement), so only the download strategy differs. The two output
   files are compared byte for byte.
2. Checkpoint download throughput: `CheckpointDownloader` (partial file, size check, rename)
   against a raw loopback read of the same bytes into a file, both from one local HTTP server,
   in alternating rounds (median of each).

    python bench/downloads.py                 # 500 chunks, 256 MiB checkpoint
    python bench/downloads.py --quick         # 100 chunks, 32 MiB (also CT_BENCH_QUICK=1)
    python bench/downloads.py --json out.json

Timings are informative only; nothing here asserts on them.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import http.server
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from reference_path import reference_on_path

MIB = 1024 * 1024
LATENCY_S = 0.020
RUN = {"experiment_name": "DB.SCHEMA.BENCH", "experiment_run_name": "RUN_BENCH"}
JOB = "bench-job"
SUB = f"{JOB}:training:0"


class _Cursor:
    def __init__(self, session: _Session) -> None:
        self.session = session
        self.rows: list[tuple[Any, ...]] = []

    def execute(self, statement: str) -> _Cursor:
        time.sleep(self.session.latency_s)
        literals = [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", statement)]
        prefix = f"snow://experiment/{RUN['experiment_name']}/versions/{RUN['experiment_run_name']}/"
        rel = literals[0][len(prefix) :]
        if statement.startswith("LIST "):
            base = self.session.tree / rel
            self.rows = [
                (
                    f"/versions/{RUN['experiment_run_name']}/{p.relative_to(self.session.tree).as_posix()}",
                    p.stat().st_size,
                )
                for p in sorted(base.rglob("*"))
                if p.is_file()
            ]
        else:
            source = self.session.tree / rel
            target = Path(literals[1].removeprefix("file://"))
            target.mkdir(parents=True, exist_ok=True)
            (target / source.name).write_bytes(source.read_bytes())
            self.rows = [(source.name,)]
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def close(self) -> None:
        pass


class _Session:
    """A stand-in Connector session: every statement waits `latency_s`, then reads `tree`."""

    def __init__(self, tree: Path, latency_s: float) -> None:
        self.tree, self.latency_s = tree, latency_s

    def cursor(self) -> _Cursor:
        return _Cursor(self)

    def close(self) -> None:
        pass


def _stage_chunks(tree: Path, count: int) -> None:
    folder = tree / "_stdout" / SUB
    folder.mkdir(parents=True)
    for index in range(count):
        text = "".join(f"[{index:05d}] step output line {n} " + "x" * 60 + "\n" for n in range(40))
        name = f"console.20260101-{index // 3600:02d}{index // 60 % 60:02d}{index % 60:02d}.c{index:05d}.gz"
        (folder / name).write_bytes(gzip.compress(text.encode()))


def bench_stdout(chunks: int, latency_s: float) -> dict[str, Any]:
    reference_on_path()
    from cortex_training import CortexTrainingClient as ReferenceClient

    from ct_core.downloads.chunks import STDOUT, ChunkDownload
    from ct_core.downloads.snowflake_store import SnowflakeArtifactStore

    with tempfile.TemporaryDirectory(prefix="ct-bench-dl-") as scratch:
        root = Path(scratch)
        tree = root / "stage"
        _stage_chunks(tree, chunks)
        session = _Session(tree, latency_s)

        started = time.perf_counter()
        store = SnowflakeArtifactStore(lambda: session, RUN)
        ChunkDownload(store, JOB, root / "ours", STDOUT).run()
        ours_s = time.perf_counter() - started

        reference = ReferenceClient(base_url="http://127.0.0.1:9", database="DB", schema="SCHEMA")
        reference.get_experiment_run = lambda job_id: dict(RUN)  # type: ignore[method-assign]
        reference._open_experiment_artifact_connection = lambda: session  # type: ignore[method-assign]
        started = time.perf_counter()
        reference.download_stdout_logs(JOB, root / "reference")
        reference_s = time.perf_counter() - started

        same = (root / "ours" / SUB / "stdout.log").read_bytes() == (
            root / "reference" / SUB / "stdout.log"
        ).read_bytes()
    return {
        "chunks": chunks,
        "latency_ms": latency_s * 1000,
        "ours_s": round(ours_s, 3),
        "reference_s": round(reference_s, 3),
        "speedup": round(reference_s / ours_s, 2),
        "identical_output": same,
    }


def _serve(blob: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            size = blob.stat().st_size
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            with blob.open("rb") as source:
                while block := source.read(MIB):
                    self.wfile.write(block)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def bench_checkpoint(size_mib: int, rounds: int = 5) -> dict[str, Any]:
    """Median of `rounds` alternating runs: the page cache and disk writeback of one run slow the next,
    so raw and ours take turns and each output file is removed before the next round."""
    import statistics

    from ct_core.downloads.checkpoint import CheckpointDownloader

    with tempfile.TemporaryDirectory(prefix="ct-bench-ckpt-") as scratch:
        root = Path(scratch)
        blob = root / "blob.bin"
        with blob.open("wb") as sink:
            for _ in range(size_mib):
                sink.write(os.urandom(MIB))
        server, port = _serve(blob)
        answer = {
            "files": [
                {
                    "filename": "model.bin",
                    "url": f"http://127.0.0.1:{port}/blob.bin",
                    "size_bytes": size_mib * MIB,
                }
            ]
        }

        def raw() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port)
            connection.request("GET", "/blob.bin")
            response = connection.getresponse()
            with (root / "raw.bin").open("wb") as sink:
                while block := response.read(MIB):
                    sink.write(block)
            connection.close()

        def ours() -> None:
            downloader = CheckpointDownloader(lambda: answer, root / "ours")
            try:
                downloader.run()
            finally:
                downloader.close()

        timings: dict[str, list[float]] = {"raw": [], "ours": []}
        try:
            for _ in range(rounds):
                for name, run in (("raw", raw), ("ours", ours)):
                    started = time.perf_counter()
                    run()
                    timings[name].append(time.perf_counter() - started)
                    (root / "raw.bin").unlink(missing_ok=True)
                    (root / "ours" / "model.bin").unlink(missing_ok=True)
        finally:
            server.shutdown()
            server.server_close()
    raw_s, ours_s = statistics.median(timings["raw"]), statistics.median(timings["ours"])
    return {
        "size_mib": size_mib,
        "rounds": rounds,
        "raw_MiB_s": round(size_mib / raw_s, 1),
        "ours_MiB_s": round(size_mib / ours_s, 1),
        "ratio": round(raw_s / ours_s, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", default=bool(os.environ.get("CT_BENCH_QUICK")))
    parser.add_argument("--chunks", type=int)
    parser.add_argument("--checkpoint-mib", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    chunks = args.chunks or (100 if args.quick else 500)
    size = args.checkpoint_mib or (32 if args.quick else 256)
    results = {"stdout": bench_stdout(chunks, LATENCY_S), "checkpoint": bench_checkpoint(size)}
    text = json.dumps(results, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
