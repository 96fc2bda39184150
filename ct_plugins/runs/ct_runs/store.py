"""The runs service's own records: datasets, runs, metrics, logs, jobs, registered models, workers.

One SQLAlchemy engine over SQLite (a file under the service's state dir) or the Postgres that
DBOS uses too, so several workers on several machines see the same records. DBOS keeps its own
tables (workflow status and step outputs); these tables hold what callers read.

Every mutable field of a run that the engine changes lives in ``state`` (one JSON column written
in one transaction with the metrics and logs it goes with), except ``cancel_requested``, which
the HTTP side sets on its own so a cancel never races with a state write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ct_core.fs import exclusive_lock

metadata = sa.MetaData()

datasets = sa.Table(
    "ctr_datasets",
    metadata,
    sa.Column("dataset_id", sa.String(64), primary_key=True),
    sa.Column("database", sa.String(256), nullable=False),
    sa.Column("schema", sa.String(256), nullable=False),
    sa.Column("owner", sa.String(256), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("options", sa.Text, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("source", sa.LargeBinary),
)

dataset_rows = sa.Table(
    "ctr_dataset_rows",
    metadata,
    sa.Column("dataset_id", sa.String(64), primary_key=True),
    sa.Column("split", sa.String(16), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("row", sa.Text, nullable=False),
)

runs = sa.Table(
    "ctr_runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("database", sa.String(256), nullable=False),
    sa.Column("schema", sa.String(256), nullable=False),
    sa.Column("owner", sa.String(256), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False, index=True),
    sa.Column("dataset_id", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("cancel_requested", sa.Boolean, nullable=False, default=False),
)

metrics = sa.Table(
    "ctr_metrics",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("value", sa.Float, nullable=False),
)

logs = sa.Table(
    "ctr_logs",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False, index=True),
    sa.Column("ts", sa.Float, nullable=False),
    sa.Column("severity", sa.String(16), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("context", sa.Text, nullable=False),
)

jobs = sa.Table(
    "ctr_jobs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("job_id", sa.String(256), primary_key=True),
    sa.Column("n_gpus", sa.Integer, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("running_since", sa.Float),
    sa.Column("ended_at", sa.Float),
)

#: The idempotency keys of run starts: a start that names a key this caller (owner, database and
#: schema) has used before is answered with that key's run, whatever became of it since. Kept for the
#: life of the database (a few dozen bytes a start).
run_keys = sa.Table(
    "ctr_run_keys",
    metadata,
    sa.Column("owner", sa.String(256), primary_key=True),
    sa.Column("database", sa.String(256), primary_key=True),
    sa.Column("schema", sa.String(256), primary_key=True),
    sa.Column("key", sa.String(256), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("request_sha256", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

models = sa.Table(
    "ctr_models",
    metadata,
    sa.Column("model_id", sa.String(64), primary_key=True),
    sa.Column("run_id", sa.String(64), nullable=False, unique=True),
    sa.Column("database", sa.String(256), nullable=False),
    sa.Column("schema", sa.String(256), nullable=False),
    sa.Column("owner", sa.String(256), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
)

workers = sa.Table(
    "ctr_workers",
    metadata,
    sa.Column("executor_id", sa.String(256), primary_key=True),
    sa.Column("last_seen", sa.Float, nullable=False),
    sa.Column("recovered_by", sa.String(256)),
)

deliveries = sa.Table(
    "ctr_deliveries",
    metadata,
    sa.Column("delivery_id", sa.String(128), primary_key=True),
    sa.Column("url", sa.Text, primary_key=True),
    sa.Column("delivered", sa.Boolean, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("status_code", sa.Integer),
    sa.Column("error", sa.Text),
)


@dataclass(frozen=True)
class RunKey:
    """An idempotency key of a run start, with the SHA-256 of the request it came with."""

    key: str
    request_sha256: str


class StartedRun(NamedTuple):
    """What a start answers: the run, whether this start created it, and for a start under an
    idempotency key the SHA-256 of the request that key was first used with."""

    run_id: str
    created: bool
    request_sha256: str | None


#: Statuses a run never leaves.
TERMINAL = ("succeeded", "failed", "cancelled")
#: Statuses in which an identical request is answered with the same run.
IN_FLIGHT = ("queued", "running")


def workflow_id_of(run_id: str, state: Mapping[str, Any]) -> str:
    """The id of a run's current DBOS workflow: the run id, or the one its latest resume started
    (a workflow id runs once, so each resume names a new one)."""
    return str(state.get("workflow_id") or run_id)


def rfc3339(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def make_engine(url: str) -> Engine:
    """An engine for the records; SQLite gets a busy timeout so threads wait, not fail (and WAL,
    set once by :func:`create_tables`)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return sa.create_engine(url, pool_pre_ping=True)


# Any fixed 64-bit number; every worker of this service takes the same one.
SCHEMA_LOCK_KEY = 0x63745F72756E73  # "ct_runs"


def create_tables(engine: Engine) -> None:
    """Create the tables that are missing, safely when several processes or threads start at once
    on an empty database (each would see no table and race on the CREATE): the check and the
    CREATEs run under one lock, and the first starter creates while the others wait, then find
    the tables. On Postgres the lock is a transaction-scoped advisory lock. On SQLite it is a lock
    file next to the database, which also covers switching the file to WAL: SQLite answers "database
    is locked" at once, without waiting, to a journal-mode change that meets another writer."""
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        with exclusive_lock(f"{engine.url.database}.init-lock"), engine.connect() as conn:
            if conn.exec_driver_sql("PRAGMA journal_mode").scalar() != "wal":
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            metadata.create_all(conn)
            conn.commit()
        return
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
        metadata.create_all(conn)


class Store:
    """Reads and writes of the service's tables; each method is one transaction."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        create_tables(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    # --- datasets -------------------------------------------------------------------------------

    def add_dataset(
        self, record: Mapping[str, Any], *, owner: str, options: Mapping[str, Any], source: bytes
    ) -> None:
        with self.tx() as c:
            c.execute(
                datasets.insert().values(
                    dataset_id=record["dataset_id"],
                    database=record["database"],
                    schema=record["schema"],
                    owner=owner,
                    status=record["status"],
                    created_at=record["created_ts"],
                    summary=_dumps(dict(record)),
                    options=_dumps(dict(options)),
                    source=source,
                )
            )

    def dataset_row(self, dataset_id: str) -> Any:
        with self.tx() as c:
            return c.execute(datasets.select().where(datasets.c.dataset_id == dataset_id)).first()

    def finish_dataset(
        self,
        dataset_id: str,
        summary: Mapping[str, Any],
        rows: Mapping[str, Sequence[Mapping[str, Any]]] | None,
    ) -> None:
        """Store a build's outcome (and its split rows) in one transaction, idempotently."""
        with self.tx() as c:
            c.execute(dataset_rows.delete().where(dataset_rows.c.dataset_id == dataset_id))
            for split, items in (rows or {}).items():
                if items:
                    c.execute(
                        dataset_rows.insert(),
                        [
                            {"dataset_id": dataset_id, "split": split, "idx": i, "row": _dumps(r)}
                            for i, r in enumerate(items)
                        ],
                    )
            c.execute(
                datasets.update()
                .where(datasets.c.dataset_id == dataset_id)
                .values(status=summary["status"], summary=_dumps(dict(summary)), source=None)
            )

    def set_dataset_workflow(self, dataset_id: str, workflow_id: str, *, only_if_summary: str) -> bool:
        """Record in a building dataset's summary the DBOS workflow that builds it now (the
        dataset id names the first one). A compare-and-swap on the summary as read: of two
        workers that start at once, one records its workflow. Returns whether it happened."""
        summary = {**json.loads(only_if_summary), "workflow_id": workflow_id}
        with self.tx() as c:
            query = (
                datasets.update()
                .where(
                    datasets.c.dataset_id == dataset_id,
                    datasets.c.status == "building",
                    datasets.c.summary == only_if_summary,
                )
                .values(summary=_dumps(summary))
            )
            return bool(c.execute(query).rowcount)

    def dataset_rows(self, dataset_id: str, split: str) -> list[dict[str, Any]]:
        with self.tx() as c:
            result = c.execute(
                sa.select(dataset_rows.c.row)
                .where(dataset_rows.c.dataset_id == dataset_id, dataset_rows.c.split == split)
                .order_by(dataset_rows.c.idx)
            )
            return [json.loads(r.row) for r in result]

    def train_rows(self, dataset_id: str, *, separate_validation: bool) -> list[dict[str, Any]]:
        """The rows a run trains on: the train split, and the validation split too when the run
        validates on a dataset of its own (the split then has nothing else to do)."""
        rows = self.dataset_rows(dataset_id, "train")
        if separate_validation:
            rows += self.dataset_rows(dataset_id, "validation")
        return rows

    def all_rows(self, dataset_id: str) -> list[dict[str, Any]]:
        """Every row of a dataset build, its train split then its validation split."""
        return self.dataset_rows(dataset_id, "train") + self.dataset_rows(dataset_id, "validation")

    # --- runs -----------------------------------------------------------------------------------

    def insert_run_unless_in_flight(
        self,
        record: Mapping[str, Any],
        state: Mapping[str, Any],
        owner: str,
        key: RunKey | None = None,
    ) -> StartedRun:
        """Insert a new run, or return the run that answers this start instead.

        With an idempotency `key`, a key this caller has used before answers its run, whatever its
        status now. Otherwise a queued or running run of the same fingerprint and owner answers.
        A new run, or an in-flight one that answered, is recorded under the key. The checks and the
        inserts share one transaction; on Postgres transaction-scoped advisory locks on the
        fingerprint and the key make concurrent starts agree on one run. Two processes on one
        SQLite file that race on one key meet at the key's primary key: the loser reads the
        winner's run.
        """
        try:
            return self._insert_run(record, state, owner, key)
        except sa.exc.IntegrityError:
            if key is None:
                raise
            found = self.run_for_key(owner, str(record["database"]), str(record["schema"]), key.key)
            if found is None:
                raise
            return found

    def _insert_run(
        self, record: Mapping[str, Any], state: Mapping[str, Any], owner: str, key: RunKey | None
    ) -> StartedRun:
        database, schema = str(record["database"]), str(record["schema"])
        with self.tx() as c:
            if c.dialect.name == "postgresql":
                c.execute(
                    sa.text("SELECT pg_advisory_xact_lock(hashtext(:f))"), {"f": record["config_fingerprint"]}
                )
                if key is not None:
                    c.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": "key:" + key.key})
            if key is not None:
                found = self._key_row(c, owner, database, schema, key.key)
                if found is not None:
                    return found
            existing = c.execute(
                sa.select(runs.c.run_id)
                .where(
                    runs.c.fingerprint == record["config_fingerprint"],
                    runs.c.owner == owner,
                    runs.c.database == database,
                    runs.c.schema == schema,
                    runs.c.status.in_(IN_FLIGHT),
                )
                .order_by(runs.c.created_at)
            ).first()
            run_id, created = (
                (str(existing.run_id), False) if existing is not None else (str(record["run_id"]), True)
            )
            if created:
                c.execute(
                    runs.insert().values(
                        run_id=run_id,
                        database=database,
                        schema=schema,
                        owner=owner,
                        status="queued",
                        fingerprint=record["config_fingerprint"],
                        dataset_id=record["dataset_id"],
                        created_at=record["created_ts"],
                        record=_dumps(dict(record)),
                        state=_dumps(dict(state)),
                        cancel_requested=False,
                    )
                )
            if key is not None:
                c.execute(
                    run_keys.insert().values(
                        owner=owner,
                        database=database,
                        schema=schema,
                        key=key.key,
                        run_id=run_id,
                        request_sha256=key.request_sha256,
                        created_at=time.time(),
                    )
                )
            return StartedRun(run_id, created, key.request_sha256 if key is not None else None)

    def run_for_key(self, owner: str, database: str, schema: str, key: str) -> StartedRun | None:
        """The run an idempotency key of this caller started, or None for a key not seen yet."""
        with self.tx() as c:
            return self._key_row(c, owner, database, schema, key)

    @staticmethod
    def _key_row(c: Connection, owner: str, database: str, schema: str, key: str) -> StartedRun | None:
        row = c.execute(
            sa.select(run_keys.c.run_id, run_keys.c.request_sha256).where(
                run_keys.c.owner == owner,
                run_keys.c.database == database,
                run_keys.c.schema == schema,
                run_keys.c.key == key,
            )
        ).first()
        return None if row is None else StartedRun(str(row.run_id), False, str(row.request_sha256))

    def run_row(self, run_id: str) -> Any:
        with self.tx() as c:
            return c.execute(runs.select().where(runs.c.run_id == run_id)).first()

    def list_runs(
        self, *, database: str, schema: str, owner: str | None, status: str | None, limit: int
    ) -> list[Any]:
        query = runs.select().where(runs.c.database == database, runs.c.schema == schema)
        if owner is not None:
            query = query.where(runs.c.owner == owner)
        if status is not None:
            query = query.where(runs.c.status == status)
        with self.tx() as c:
            return list(
                c.execute(query.order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit))
            )

    def write_state(
        self,
        run_id: str,
        state: Mapping[str, Any],
        *,
        status: str | None = None,
        metric_points: Iterable[tuple[str, int, float]] = (),
        log_entries: Iterable[tuple[float, str, str, Mapping[str, Any]]] = (),
        only_if_status: Sequence[str] | None = None,
        only_if_state: str | None = None,
    ) -> bool:
        """Write a run's state, status, metric points and log lines in one transaction.

        With ``only_if_status`` the write happens only while the run's status is one of those; with
        ``only_if_state`` only while the stored state is still that text (as read from the row): a
        compare-and-swap that one of several concurrent writers wins, in any number of processes.
        Returns whether it happened.
        """
        with self.tx() as c:
            values: dict[str, Any] = {"state": _dumps(dict(state))}
            if status is not None:
                values["status"] = status
            query = runs.update().where(runs.c.run_id == run_id)
            if only_if_status is not None:
                query = query.where(runs.c.status.in_(list(only_if_status)))
            if only_if_state is not None:
                query = query.where(runs.c.state == only_if_state)
            if c.execute(query.values(**values)).rowcount == 0:
                return False
            self._add_metrics(c, run_id, metric_points)
            self._add_logs(c, run_id, log_entries)
            return True

    def reopen_run(
        self,
        run_id: str,
        state: Mapping[str, Any],
        *,
        only_if_state: str,
        log_entries: Iterable[tuple[float, str, str, Mapping[str, Any]]] = (),
    ) -> bool:
        """Put a failed or cancelled run back in the queue with ``state``, its cancel flag cleared.

        A compare-and-swap on the state as read (``only_if_state``) and on the status: of two
        resumes at once, or a resume and anything else writing the run, one wins. Returns whether
        it happened.
        """
        with self.tx() as c:
            query = (
                runs.update()
                .where(
                    runs.c.run_id == run_id,
                    runs.c.status.in_(["failed", "cancelled"]),
                    runs.c.state == only_if_state,
                )
                .values(state=_dumps(dict(state)), status="queued", cancel_requested=False)
            )
            if c.execute(query).rowcount == 0:
                return False
            self._add_logs(c, run_id, log_entries)
            return True

    def add_logs(self, run_id: str, entries: Iterable[tuple[float, str, str, Mapping[str, Any]]]) -> None:
        with self.tx() as c:
            self._add_logs(c, run_id, entries)

    @staticmethod
    def _add_logs(
        c: Connection, run_id: str, entries: Iterable[tuple[float, str, str, Mapping[str, Any]]]
    ) -> None:
        items = [
            {"run_id": run_id, "ts": ts, "severity": sev, "message": msg, "context": _dumps(dict(ctx))}
            for ts, sev, msg, ctx in entries
        ]
        if items:
            c.execute(logs.insert(), items)

    @staticmethod
    def _add_metrics(c: Connection, run_id: str, points: Iterable[tuple[str, int, float]]) -> None:
        latest: dict[tuple[str, int], float] = {}
        for name, step, value in points:
            latest[(name, int(step))] = float(value)
        if not latest:
            return
        keys = list(latest)
        # Replace: a replayed step writes the same value again (provisional rows of a lost segment).
        for name in {k[0] for k in keys}:
            steps = [s for n, s in keys if n == name]
            c.execute(
                metrics.delete().where(
                    metrics.c.run_id == run_id, metrics.c.name == name, metrics.c.step.in_(steps)
                )
            )
        c.execute(
            metrics.insert(),
            [{"run_id": run_id, "name": n, "step": s, "value": v} for (n, s), v in latest.items()],
        )

    def drop_metrics_after(self, run_id: str, step: int) -> None:
        """Forget the provisional points past a checkpoint a resumed run replays from."""
        with self.tx() as c:
            c.execute(metrics.delete().where(metrics.c.run_id == run_id, metrics.c.step > step))

    def request_cancel(self, run_id: str) -> str | None:
        """Flag a cancel; a queued run ends cancelled at once. Returns the status after the call."""
        with self.tx() as c:
            row = c.execute(sa.select(runs.c.status).where(runs.c.run_id == run_id)).first()
            if row is None:
                return None
            if row.status in TERMINAL:
                return str(row.status)
            c.execute(runs.update().where(runs.c.run_id == run_id).values(cancel_requested=True))
            if row.status == "queued":
                c.execute(
                    runs.update()
                    .where(runs.c.run_id == run_id, runs.c.status == "queued")
                    .values(status="cancelled")
                )
                return "cancelled"
            return str(row.status)

    def cancel_requested(self, run_id: str) -> bool:
        with self.tx() as c:
            row = c.execute(sa.select(runs.c.cancel_requested).where(runs.c.run_id == run_id)).first()
            return bool(row and row.cancel_requested)

    def metric_series(self, run_id: str, after_step: int) -> tuple[dict[str, list[list[float]]], int]:
        with self.tx() as c:
            result = c.execute(
                sa.select(metrics.c.name, metrics.c.step, metrics.c.value)
                .where(metrics.c.run_id == run_id, metrics.c.step > after_step)
                .order_by(metrics.c.name, metrics.c.step)
            )
            series: dict[str, list[list[float]]] = {}
            cursor = after_step
            for name, step, value in result:
                series.setdefault(name, []).append([int(step), float(value)])
                cursor = max(cursor, int(step))
            return series, cursor

    def log_entries(self, run_id: str, after: int, limit: int) -> list[Any]:
        with self.tx() as c:
            return list(
                c.execute(
                    logs.select()
                    .where(logs.c.run_id == run_id, logs.c.seq > after)
                    .order_by(logs.c.seq)
                    .limit(limit)
                )
            )

    # --- jobs -----------------------------------------------------------------------------------

    def add_job(self, run_id: str, job_id: str, n_gpus: int) -> None:
        with self.tx() as c:
            c.execute(
                jobs.insert().values(run_id=run_id, job_id=job_id, n_gpus=n_gpus, created_at=time.time())
            )

    def job_running(self, run_id: str, job_id: str, ts: float) -> None:
        with self.tx() as c:
            c.execute(
                jobs.update()
                .where(jobs.c.run_id == run_id, jobs.c.job_id == job_id, jobs.c.running_since.is_(None))
                .values(running_since=ts)
            )

    def job_ended(self, run_id: str, job_id: str, ts: float) -> None:
        with self.tx() as c:
            c.execute(
                jobs.update()
                .where(jobs.c.run_id == run_id, jobs.c.job_id == job_id, jobs.c.ended_at.is_(None))
                .values(ended_at=ts)
            )

    def run_jobs(self, run_id: str) -> list[Any]:
        with self.tx() as c:
            return list(c.execute(jobs.select().where(jobs.c.run_id == run_id).order_by(jobs.c.created_at)))

    def gpu_seconds(self, run_id: str, now: float | None = None) -> float:
        """GPUs × running seconds of every job of the run (a job still running counts up to now)."""
        now = time.time() if now is None else now
        total = 0.0
        for row in self.run_jobs(run_id):
            if row.running_since is None:
                continue
            end = row.ended_at if row.ended_at is not None else now
            total += row.n_gpus * max(0.0, end - row.running_since)
        return total

    # --- models ---------------------------------------------------------------------------------

    def add_model(self, record: Mapping[str, Any], *, owner: str) -> str:
        """Register the run's model version once; a second call returns the first one's id.

        Also when two calls race: a run has at most one row (its run_id is unique), so the insert
        that comes second fails, and that call answers with the row the first one inserted.
        """
        try:
            with self.tx() as c:
                existing = c.execute(
                    sa.select(models.c.model_id).where(models.c.run_id == record["run_id"])
                ).first()
                if existing is not None:
                    return str(existing.model_id)
                c.execute(
                    models.insert().values(
                        model_id=record["model_id"],
                        run_id=record["run_id"],
                        database=record["database"],
                        schema=record["schema"],
                        owner=owner,
                        record=_dumps(dict(record)),
                    )
                )
                return str(record["model_id"])
        except sa.exc.IntegrityError:
            first = self.model_for_run(str(record["run_id"]))
            if first is None:
                raise
            return str(first.model_id)

    def model_for_run(self, run_id: str) -> Any:
        """The model row registered for a run, or None."""
        with self.tx() as c:
            return c.execute(models.select().where(models.c.run_id == run_id)).first()

    def list_models(
        self, *, database: str, schema: str, owner: str, run_id: str | None, limit: int
    ) -> list[Any]:
        """The models registered in a schema for ``owner``, newest first; only ``run_id``'s when given."""
        query = models.select().where(
            models.c.owner == owner,
            sa.func.upper(models.c.database) == database.upper(),
            sa.func.upper(models.c.schema) == schema.upper(),
        )
        if run_id is not None:
            query = query.where(models.c.run_id == run_id)
        with self.tx() as c:
            rows = list(c.execute(query))
        # The record holds the registration time (the table has no column of its own for it).
        rows.sort(
            key=lambda row: (json.loads(row.record).get("created_ts") or 0.0, row.model_id), reverse=True
        )
        return rows[:limit]

    def model_row(self, model_id: str) -> Any:
        with self.tx() as c:
            return c.execute(models.select().where(models.c.model_id == model_id)).first()

    # --- webhook deliveries ---------------------------------------------------------------------

    def delivered(self, delivery_id: str, url: str) -> bool:
        with self.tx() as c:
            row = c.execute(
                sa.select(deliveries.c.delivered).where(
                    deliveries.c.delivery_id == delivery_id, deliveries.c.url == url
                )
            ).first()
            return bool(row and row.delivered)

    def record_delivery(
        self,
        delivery_id: str,
        url: str,
        *,
        delivered: bool,
        attempts: int,
        status_code: int | None,
        error: str | None,
    ) -> None:
        with self.tx() as c:
            c.execute(
                deliveries.delete().where(deliveries.c.delivery_id == delivery_id, deliveries.c.url == url)
            )
            c.execute(
                deliveries.insert().values(
                    delivery_id=delivery_id,
                    url=url,
                    delivered=delivered,
                    attempts=attempts,
                    status_code=status_code,
                    error=error,
                )
            )

    # --- workers --------------------------------------------------------------------------------

    def heartbeat(self, executor_id: str, ts: float | None = None) -> None:
        ts = time.time() if ts is None else ts
        with self.tx() as c:
            updated = c.execute(
                workers.update()
                .where(workers.c.executor_id == executor_id)
                .values(last_seen=ts, recovered_by=None)
            ).rowcount
            if not updated:
                c.execute(workers.insert().values(executor_id=executor_id, last_seen=ts))

    def live_workers(self, stale_after_s: float, ts: float | None = None) -> set[str]:
        """The workers heard from within the last ``stale_after_s`` seconds."""
        ts = time.time() if ts is None else ts
        with self.tx() as c:
            query = sa.select(workers.c.executor_id).where(workers.c.last_seen >= ts - stale_after_s)
            return {str(r.executor_id) for r in c.execute(query)}

    def claim_dead_workers(
        self, executor_id: str, stale_after_s: float, ts: float | None = None
    ) -> list[str]:
        """Mark the workers silent for longer than ``stale_after_s`` as recovered by this one.

        Only one live worker wins each dead one (the update is conditional), so a dead worker's
        workflows are handed on once.
        """
        ts = time.time() if ts is None else ts
        won: list[str] = []
        with self.tx() as c:
            stale = c.execute(
                sa.select(workers.c.executor_id).where(
                    workers.c.last_seen < ts - stale_after_s,
                    workers.c.recovered_by.is_(None),
                    workers.c.executor_id != executor_id,
                )
            ).all()
            for (dead,) in stale:
                n = c.execute(
                    workers.update()
                    .where(workers.c.executor_id == dead, workers.c.recovered_by.is_(None))
                    .values(recovered_by=executor_id)
                ).rowcount
                if n:
                    won.append(str(dead))
        return won
