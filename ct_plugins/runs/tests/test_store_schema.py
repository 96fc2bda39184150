"""Creating the service's tables is safe when several workers start against one empty database."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import sqlalchemy as sa
from ct_runs.store import Store, make_engine

STARTERS = 8
ROUNDS = 4


def _fresh_database(postgres_url: str) -> str:
    name = f"schema_{uuid.uuid4().hex[:12]}"
    admin = make_engine(postgres_url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return postgres_url.rsplit("/", 1)[0] + "/" + name


def _start_together(url: str) -> list[BaseException]:
    barrier = threading.Barrier(STARTERS)
    failures: list[BaseException] = []
    stores: list[Store] = []
    lock = threading.Lock()

    def start() -> None:
        barrier.wait()
        try:
            store = Store(url)
        except Exception as exc:  # every failure is the finding
            with lock:
                failures.append(exc)
        else:
            with lock:
                stores.append(store)

    threads = [threading.Thread(target=start) for _ in range(STARTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for store in stores:
        store.close()
    return failures


def test_workers_starting_at_once_on_an_empty_postgres_all_come_up(postgres_url: str) -> None:
    for _ in range(ROUNDS):
        url = _fresh_database(postgres_url)
        failures = _start_together(url)
        assert failures == [], f"{len(failures)} of {STARTERS} starts failed: {failures[0]!r}"
        engine = make_engine(url)
        tables = set(sa.inspect(engine).get_table_names())
        engine.dispose()
        assert {"ctr_datasets", "ctr_runs"} <= tables


def test_threads_starting_at_once_on_a_new_sqlite_file_all_come_up(tmp_path: Any) -> None:
    for round_ in range(ROUNDS):
        url = f"sqlite:///{tmp_path / f'runs-{round_}.db'}"
        failures = _start_together(url)
        assert failures == [], f"{len(failures)} of {STARTERS} starts failed: {failures[0]!r}"
        engine = make_engine(url)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert {"ctr_datasets", "ctr_runs"} <= set(sa.inspect(engine).get_table_names())
        engine.dispose()


def test_a_second_start_on_an_existing_schema_changes_nothing(postgres_url: str, tmp_path: Any) -> None:
    for url in (_fresh_database(postgres_url), f"sqlite:///{tmp_path / 'runs.db'}"):
        first = Store(url)
        with first.tx() as c:
            c.execute(sa.text("CREATE TABLE marker (x INTEGER)"))
        first.close()
        again = Store(url)
        names = set(sa.inspect(again.engine).get_table_names())
        again.close()
        assert "marker" in names and "ctr_runs" in names
