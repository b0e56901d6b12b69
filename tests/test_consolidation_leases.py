"""The sharded nightly job: several workers over one store, each scope leased to one at a
time; every note is folded exactly once, a dead worker's lease expires and another worker
finishes its scope, a failing scope gives its lease back. PostgreSQL and SQLite workers are
real separate processes; the memory backend's are threads of one process."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

from memory_plugin import Backend, MemoryContext, connect
from memory_plugin.backends.leases import DropLease, TakeLease, alease, lease
from memory_plugin.plans import run
from memory_plugin.scope import personal_scope
from memory_plugin.scoped import ScopedMemory, shards
from memory_plugin.scoped.consolidation import aconsolidate, consolidate
from memory_plugin.scoped.documents import read_plan
from memory_plugin.scoped.job_runs import list_runs
from memory_plugin.scoped.leases import (
    LeaseError,
    LeaseTooShortError,
    Worker,
    lease_name,
    leased_scopes,
)
from memory_plugin.scoped.notes import all_notes_plan
from memory_plugin.scoped.shards import _await_leases, run_workers
from memory_plugin.settings import LayeredSettings, MemorySettings
from tests.fakes import MergingModel
from tests.lease_models import (
    MARK_ENV,
    GatedModel,
    OutlastingModel,
    SlowMergingModel,
)
from tests.scoped_helpers import failing_model

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "memory-plugin"
USERS = [MemoryContext(user_id=f"u{i}", workspace_id="acme") for i in range(12)]
PER_SCOPE = 3


def _texts(ctx: MemoryContext) -> list[str]:
    return [f"{ctx.user_id} likes item {j}" for j in range(PER_SCOPE)]


def _seed(store: BaseStore, users: list[MemoryContext]) -> None:
    """PER_SCOPE notes per user, ten days old (past the 7-day minimum age)."""
    day = (datetime.now(UTC) - timedelta(days=10)).date()
    memory = ScopedMemory(store)
    for ctx in users:
        memory.import_notes(ctx, [(day, text) for text in _texts(ctx)])


def _assert_folded_once(store: BaseStore, users: list[MemoryContext]) -> None:
    """Every note is marked folded and appears in its scope's document exactly once."""
    for ctx in users:
        scope = personal_scope(ctx)
        notes = run(store, all_notes_plan(scope))
        assert [n.consolidated for n in notes] == [True] * PER_SCOPE, ctx.user_id
        document = run(store, read_plan(scope))
        assert document is not None, ctx.user_id
        lines = sorted(line.removeprefix("- ") for line in document.text.splitlines())
        assert lines == sorted(_texts(ctx))
        assert sorted(document.folded) == sorted(n.key for n in notes)


def _assert_unmarked(store: BaseStore, ctx: MemoryContext) -> None:
    notes = run(store, all_notes_plan(personal_scope(ctx)))
    assert len(notes) == PER_SCOPE and not any(n.consolidated for n in notes)


def _cli(*args: str, **env: str) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    environ |= {"PYTHONPATH": str(ROOT), **env}
    return subprocess.Popen(
        [str(SCRIPT), "consolidate", *args],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(params=["sqlite", "postgres", "pgbouncer"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database URL that separate processes can share (PostgreSQL directly and
    through PgBouncer in transaction mode)."""
    from tests.conftest import url_for

    return url_for(request.param, request, tmp_path)


def test_a_lease_is_never_taken_while_valid(backend: Backend) -> None:
    store = backend.store
    assert lease(store, TakeLease("scope-a", "w1", 60))
    assert not lease(store, TakeLease("scope-a", "w2", 60))
    assert lease(store, TakeLease("scope-a", "w1", 60)), "its holder renews it"
    assert lease(store, TakeLease("scope-b", "w2", 60)), "another scope is free"
    assert not lease(store, DropLease("scope-a", "w2")), "only the holder gives it back"
    assert not lease(store, TakeLease("scope-a", "w2", 60))
    assert lease(store, DropLease("scope-a", "w1"))
    now = time.time()
    assert lease(store, TakeLease("scope-a", "w2", 1, at=now))
    assert not lease(store, TakeLease("scope-a", "w1", 60, at=now + 0.5)), "still valid"
    assert lease(store, TakeLease("scope-a", "w1", 60, at=now + 1.5)), "an expired lease is taken"
    assert not lease(store, TakeLease("scope-a", "w2", 60)), "valid by the database's clock"


def test_a_holders_leases_are_listed_with_the_time_they_have_left(backend: Backend) -> None:
    store = backend.store
    ann, bob = (personal_scope(ctx) for ctx in USERS[:2])
    assert leased_scopes(store, "w1") == {}
    now = time.time()
    w1, w2 = Worker("w1", 60, clock=lambda: now), Worker("w2", 5, clock=lambda: now)
    assert lease(store, w1.take(ann)) and lease(store, w2.take(bob))
    assert lease(store, TakeLease("another-job", "w1", 60))
    held = leased_scopes(store, "w1", at=now + 10)
    assert list(held) == [ann.namespace], "only its consolidation leases, as namespaces"
    assert held[ann.namespace] == pytest.approx(50)
    assert list(leased_scopes(store, "w1")) == [ann.namespace], "by the database's clock"
    assert lease(store, w1.drop(ann))
    assert leased_scopes(store, "w1") == {}
    assert leased_scopes(store, "w2", at=now + 2)[bob.namespace] == pytest.approx(3)
    assert leased_scopes(store, "w2", at=now + 7)[bob.namespace] == pytest.approx(-2)


async def test_async_leases_match_the_sync_ones(abackend: Backend) -> None:
    store = abackend.store
    assert await alease(store, TakeLease("scope-a", "w1", 60))
    assert not await alease(store, TakeLease("scope-a", "w2", 60))
    assert not await alease(store, DropLease("scope-a", "w2"))
    assert await alease(store, DropLease("scope-a", "w1"))
    now = time.time()
    assert await alease(store, TakeLease("scope-a", "w2", 60, at=now))
    assert not await alease(store, TakeLease("scope-a", "w1", 60, at=now + 30))
    assert await alease(store, TakeLease("scope-a", "w1", 60, at=now + 90)), "it expired"


@pytest.mark.slow
def test_worker_processes_fold_every_note_exactly_once(shared_url: str) -> None:
    with connect(shared_url) as backend:
        _seed(backend.store, USERS)
    model = "tests.lease_models:slow_merging_model"
    workers = _cli("--url", shared_url, "--model", model, "--workers", "3", "--worker-id", "n")
    out, err = workers.communicate(timeout=300)
    assert workers.returncode == 0, err
    assert sorted(line.split(":")[0] for line in out.splitlines()) == ["n-1", "n-2", "n-3"]
    with connect(shared_url) as backend:
        _assert_folded_once(backend.store, USERS)
        runs = list_runs(backend.store)
    assert sorted(r.worker or "" for r in runs) == ["n-1", "n-2", "n-3"]
    assert sum(r.folded for r in runs) == len(USERS) * PER_SCOPE
    folded = [s.namespace for r in runs for s in r.scopes if s.folded]
    assert len(folded) == len(set(folded)) == len(USERS), "each scope folded by one worker"


def test_worker_threads_fold_every_note_exactly_once(backend: Backend, backend_url: str) -> None:
    _seed(backend.store, USERS)
    reports = []
    with ExitStack() as opened:
        stores = [
            backend.store
            if backend_url == "memory://"
            else opened.enter_context(connect(backend_url)).store
            for _ in range(3)
        ]

        def work(i: int) -> None:
            worker = Worker(f"t{i}", shard=0, shards=2)  # all start on the same scope
            reports.append(consolidate(stores[i], SlowMergingModel(delay=0.02), worker=worker))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert len(reports) == 3
    assert sum(r.folded for r in reports) == len(USERS) * PER_SCOPE
    _assert_folded_once(backend.store, USERS)


async def test_async_workers_fold_every_note_exactly_once(abackend: Backend) -> None:
    day = (datetime.now(UTC) - timedelta(days=10)).date()
    for ctx in USERS[:6]:
        await ScopedMemory(abackend.store).aimport_notes(ctx, [(day, t) for t in _texts(ctx)])
    workers = [Worker(f"a{i}", shard=i, shards=2) for i in range(2)]
    reports = await asyncio.gather(
        *(aconsolidate(abackend.store, SlowMergingModel(delay=0.01), worker=w) for w in workers)
    )
    assert sum(r.folded for r in reports) == 6 * PER_SCOPE
    await asyncio.to_thread(_assert_folded_once, abackend.store, USERS[:6])


def test_a_held_scope_is_skipped_and_named_in_the_run_record(backend: Backend) -> None:
    users = USERS[:3]
    _seed(backend.store, users)
    first = personal_scope(users[0]).namespace
    gated = GatedModel(entered=threading.Event(), gate=threading.Event())
    held: list[object] = []
    a = Worker("a", shard=0, shards=2)
    b = Worker("b", shard=0, shards=2)
    thread = threading.Thread(
        target=lambda: held.append(consolidate(backend.store, gated, worker=a))
    )
    thread.start()
    assert gated.entered.wait(timeout=60)
    other = consolidate(backend.store, MergingModel(), worker=b)
    _assert_unmarked(backend.store, users[0])
    gated.gate.set()
    thread.join(timeout=60)
    assert other.skipped == [first]
    assert other.folded == 2 * PER_SCOPE
    assert other.run is not None and other.run.worker == "b" and other.run.skipped == (first,)
    assert "1 scopes skipped: another worker held them" in other.summary()
    (report,) = held
    assert report.folded == PER_SCOPE  # type: ignore[attr-defined]
    _assert_folded_once(backend.store, users)


def _wait_for(mark: Path, worker: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not mark.exists():
        assert worker.poll() is None, worker.communicate()
        assert time.monotonic() < deadline, "no worker reached the model"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_worker_leaves_a_lease_that_expires(shared_url: str, tmp_path: Path) -> None:
    ctx = USERS[0]
    with connect(shared_url) as backend:
        _seed(backend.store, [ctx])
    mark = tmp_path / "model-called"
    doomed = _cli(
        "--url", shared_url, "--model", "tests.lease_models:blocking_model",
        "--lease-seconds", "600", "--worker-id", "doomed",
        **{MARK_ENV: str(mark)},
    )  # fmt: skip
    _wait_for(mark, doomed)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=30)
    with connect(shared_url) as backend:
        early = consolidate(backend.store, MergingModel(), worker=Worker("rescuer"))
        assert early.skipped == [personal_scope(ctx).namespace] and early.folded == 0
        _assert_unmarked(backend.store, ctx)
        later = Worker("rescuer", clock=lambda: time.time() + 601)
        late = consolidate(backend.store, MergingModel(), worker=later)
        assert late.skipped == [] and late.folded == PER_SCOPE
        _assert_folded_once(backend.store, [ctx])


@pytest.mark.slow
def test_a_killed_worker_process_never_takes_the_others_down(
    shared_url: str, tmp_path: Path
) -> None:
    with connect(shared_url) as backend:
        _seed(backend.store, USERS)
    mark = tmp_path / "hanging-worker"
    workers = _cli(
        "--url", shared_url, "--model", "tests.lease_models:hangs_in_one_worker",
        "--workers", "3", "--worker-id", "n", "--lease-seconds", "10",
        **{MARK_ENV: str(mark), "MEMORY_CONSOLIDATION_TIMEOUT_SECONDS": "10"},
    )  # fmt: skip
    _wait_for(mark, workers)
    os.kill(int(mark.read_text()), signal.SIGKILL)
    killed_at = datetime.fromtimestamp(mark.stat().st_mtime, UTC)
    out, err = workers.communicate(timeout=300)
    assert workers.returncode == 1, (out, err)
    assert "Traceback" not in err and "BrokenProcessPool" not in err, err
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    (dead,) = [wid for wid, line in lines.items() if "died (killed by SIGKILL)" in line]
    assert sorted(lines) == sorted(["n-1", "n-2", "n-3", f"{dead}-retry"]), out
    assert f"failed: the worker process died (killed by SIGKILL) (worker {dead})" in err
    assert f"retried by {dead}-retry once the lease expired" in lines[dead]
    assert lines[f"{dead}-retry"] == "Folded 3 notes into 1 of 1 scopes."
    with connect(shared_url) as backend:
        _assert_folded_once(backend.store, USERS)
        runs = {r.worker: r for r in list_runs(backend.store)}
    assert runs[dead].status == "running", "the killed worker never finished its record"
    others = [runs[wid] for wid in ("n-1", "n-2", "n-3") if wid != dead]
    assert [r.status for r in others] == ["succeeded", "succeeded"]
    retry = runs[f"{dead}-retry"]
    assert (retry.status, retry.folded, retry.skipped) == ("succeeded", PER_SCOPE, ())
    assert sum(r.folded for r in [*others, retry]) == len(USERS) * PER_SCOPE
    started = datetime.fromisoformat(retry.started_at)
    assert started >= killed_at + timedelta(seconds=9), "retried before the lease expired"


@pytest.mark.slow
def test_a_worker_that_cannot_start_is_named_and_the_others_finish(
    shared_url: str, tmp_path: Path
) -> None:
    users = USERS[:6]
    with connect(shared_url) as backend:
        _seed(backend.store, users)
    workers = _cli(
        "--url", shared_url, "--model", "tests.lease_models:fails_in_one_worker",
        "--workers", "3", "--worker-id", "n",
        **{MARK_ENV: str(tmp_path / "failing-worker")},
    )  # fmt: skip
    out, err = workers.communicate(timeout=300)
    assert workers.returncode == 1, (out, err)
    assert "Traceback" not in err, err
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert sorted(lines) == ["n-1", "n-2", "n-3"], "it held no scope, so nothing is retried"
    (lost,) = [wid for wid, line in lines.items() if line.startswith("the worker stopped")]
    reason = "the provider refused this worker's credentials"
    assert reason in lines[lost] and f"{reason} (worker {lost})" in err
    with connect(shared_url) as backend:
        _assert_folded_once(backend.store, users)


def test_unreadable_leases_of_a_lost_worker_leave_its_scopes_to_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("")
    unreachable = f"sqlite:///{tmp_path / 'a-file' / 'memory.db'}"
    with caplog.at_level(logging.WARNING):
        assert _await_leases(unreachable, {"n-2": "the worker process died"}) == {"n-2": []}
    assert "could not read the lost workers' leases; their scopes wait" in caplog.text


def test_a_failing_scope_releases_its_lease_and_leaves_notes_unmarked(backend: Backend) -> None:
    ctx = USERS[0]
    _seed(backend.store, [ctx])
    report = consolidate(backend.store, failing_model(), worker=Worker("w"))
    assert [r.status for r in report.scopes] == ["failed"]
    _assert_unmarked(backend.store, ctx)
    assert lease(backend.store, TakeLease(lease_name(personal_scope(ctx)), "next", 60))


def test_a_worker_that_outlasts_its_lease_writes_nothing(backend: Backend) -> None:
    ctx = USERS[0]
    _seed(backend.store, [ctx])
    name = lease_name(personal_scope(ctx))
    taken: list[bool] = []

    def thief() -> None:
        later = time.time() + 6
        taken.append(lease(backend.store, TakeLease(name, "thief", 60, at=later)))

    timeout = MemorySettings(consolidation_timeout_seconds=5.0)  # as long as the lease
    report = consolidate(
        backend.store,
        OutlastingModel(before_answer=thief),
        settings=LayeredSettings(backend.store, defaults=timeout),
        worker=Worker("slow", 5),
    )
    assert taken == [True]
    (result,) = report.scopes
    assert result.status == "failed" and "another worker took this scope" in (result.error or "")
    assert run(backend.store, read_plan(personal_scope(ctx))) is None
    _assert_unmarked(backend.store, ctx)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--lease-seconds", "0"], "lease_seconds must be from 1"),
        (["--workers", "0"], "workers must be an integer from 1"),
        (["--workers", "2", "--url", "memory://"], "several workers need a shared database"),
    ],
)
def test_bad_worker_options_are_refused(args: list[str], error: str) -> None:
    refused = _cli("--model", "tests.fakes:merging_model", *args)
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and error in err and out == ""


def test_a_worker_needs_a_usable_id_and_lease() -> None:
    with pytest.raises(LeaseError, match="worker id"):
        Worker("")
    with pytest.raises(LeaseError, match="lease_seconds must be a number"):
        Worker("w", "300")  # type: ignore[arg-type]


def test_workers_started_together_start_at_their_own_share() -> None:
    scopes = [(personal_scope(ctx), ctx) for ctx in USERS[:8]]
    starts = [Worker(f"w{i}", shard=i, shards=4).order(scopes)[0] for i in range(4)]
    assert starts == [scopes[0], scopes[2], scopes[4], scopes[6]]
    assert sorted(Worker("solo").order(scopes), key=scopes.index) == scopes
    retry = Worker("solo-retry", only=frozenset({scopes[5][0].namespace}))
    assert retry.order(scopes) == [scopes[5]], "a retry takes only the scopes it is given"


REFUSED = (
    "{option} {lease} is shorter than consolidation_timeout_seconds ({timeout} s): a model call "
    "could outlast its lease and its scope would never be folded; give a lease of at least "
    "{timeout} s (default 300 s) or lower consolidation_timeout_seconds"
)


def _set_timeout(store: BaseStore, seconds: float, ctx: MemoryContext | None = None) -> None:
    """Store `consolidation_timeout_seconds` in the platform layer, or in `ctx`'s user layer."""
    layer = "platform" if ctx is None else "user"
    change = {"consolidation_timeout_seconds": seconds}
    LayeredSettings(store).update(layer, ctx or MemoryContext(), set=change)


def _assert_untouched(store: BaseStore, ctx: MemoryContext, *workers: str) -> None:
    """Nothing was written for `ctx`: its notes unmarked, no document, no run recorded, no
    lease held by `workers` or anyone."""
    _assert_unmarked(store, ctx)
    scope = personal_scope(ctx)
    assert run(store, read_plan(scope)) is None
    assert list_runs(store) == []
    assert all(leased_scopes(store, worker) == {} for worker in workers)
    assert lease(store, TakeLease(lease_name(scope), "next", 60)), "nobody holds the scope"


def test_a_lease_shorter_than_the_model_timeout_is_refused_and_writes_nothing(
    backend: Backend,
) -> None:
    ctx = USERS[0]
    _seed(backend.store, [ctx])
    model = MergingModel()
    with pytest.raises(LeaseTooShortError) as refused:
        consolidate(backend.store, model, worker=Worker("w", 60))
    assert str(refused.value) == REFUSED.format(option="lease_seconds", lease=60, timeout=120)
    assert (refused.value.lease_seconds, refused.value.timeout_seconds) == (60, 120)
    assert isinstance(refused.value, LeaseError), "a LeaseError, as a bad lease length is"
    assert model.prompts == []
    _assert_untouched(backend.store, ctx, "w")


async def test_async_consolidation_refuses_a_short_lease_too(abackend: Backend) -> None:
    day = (datetime.now(UTC) - timedelta(days=10)).date()
    ctx = USERS[0]
    await ScopedMemory(abackend.store).aimport_notes(ctx, [(day, t) for t in _texts(ctx)])
    with pytest.raises(LeaseTooShortError, match=r"^lease_seconds 119 is shorter than"):
        await aconsolidate(abackend.store, MergingModel(), worker=Worker("w", 119))
    await asyncio.to_thread(_assert_untouched, abackend.store, ctx, "w")


def test_a_lease_as_long_as_the_stored_model_timeout_folds(backend: Backend) -> None:
    users = USERS[:2]
    _seed(backend.store, users)
    _set_timeout(backend.store, 60.0)
    report = consolidate(backend.store, MergingModel(), worker=Worker("w", 60))
    assert report.failed == [] and report.folded == 2 * PER_SCOPE
    _assert_folded_once(backend.store, users)
    _set_timeout(backend.store, 61.0)
    with pytest.raises(LeaseTooShortError, match=r"consolidation_timeout_seconds \(61 s\)"):
        consolidate(backend.store, MergingModel(), worker=Worker("w", 60))


def test_a_scope_whose_own_timeout_outlasts_the_lease_fails_unread_and_named(
    backend: Backend,
) -> None:
    slow, other = USERS[:2]
    _seed(backend.store, [slow, other])
    _set_timeout(backend.store, 600.0, slow)
    model = MergingModel()
    report = consolidate(backend.store, model, worker=Worker("w"))
    (failed,) = report.failed
    error = (
        "LeaseTooShortError: lease_seconds 300 is shorter than this scope's "
        "consolidation_timeout_seconds (600 s): its model call could outlast the lease, so "
        "the scope is not consolidated; give the workers a lease of at least 600 s or lower "
        "consolidation_timeout_seconds for this scope"
    )
    assert (failed.namespace, failed.error) == (personal_scope(slow).namespace, error)
    assert not any(slow.user_id + " likes" in prompt for prompt in model.prompts)
    _assert_unmarked(backend.store, slow)
    assert run(backend.store, read_plan(personal_scope(slow))) is None
    _assert_folded_once(backend.store, [other])
    assert report.run is not None and report.run.status == "partial"
    assert [s.error for s in report.run.scopes if s.status == "failed"] == [error]
    assert lease(backend.store, TakeLease(lease_name(personal_scope(slow)), "next", 60))


def test_run_workers_refuses_a_short_lease_before_any_worker_starts(
    shared_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = USERS[0]
    with connect(shared_url) as backend:
        _seed(backend.store, [ctx])

    def started(*args: object) -> None:
        raise AssertionError("a worker process started")

    monkeypatch.setattr(shards, "_start", started)
    with pytest.raises(LeaseTooShortError) as refused:
        run_workers(shared_url, "tests.fakes:merging_model", 2, worker_id="n", lease_seconds=60)
    assert str(refused.value) == REFUSED.format(option="lease_seconds", lease=60, timeout=120)
    with connect(shared_url) as backend:
        _assert_untouched(backend.store, ctx, "n-1", "n-2")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_cli_refuses_a_lease_shorter_than_the_model_timeout(
    shared_url: str, workers: str
) -> None:
    ctx = USERS[0]
    with connect(shared_url) as backend:
        _seed(backend.store, [ctx])
    refused = _cli(
        "--url", shared_url, "--model", "tests.fakes:merging_model",
        "--workers", workers, "--worker-id", "n", "--lease-seconds", "60",
    )  # fmt: skip
    out, err = refused.communicate(timeout=120)
    message = REFUSED.format(option="--lease-seconds", lease=60, timeout=120)
    assert (refused.returncode, out) == (2, ""), err
    assert err.splitlines()[-1] == f"memory-plugin: {message}", "one line, last"
    assert err.count("memory-plugin:") == 1 and "Traceback" not in err, err
    with connect(shared_url) as backend:
        _assert_untouched(backend.store, ctx, "n", "n-1", "n-2")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_cli_runs_with_a_lease_as_long_as_the_effective_model_timeout(
    shared_url: str, workers: str
) -> None:
    users = USERS[:2]
    with connect(shared_url) as backend:
        _seed(backend.store, users)
        _set_timeout(backend.store, 90.0)  # the environment overrides the stored 90
    done = _cli(
        "--url", shared_url, "--model", "tests.fakes:merging_model",
        "--workers", workers, "--worker-id", "n", "--lease-seconds", "60",
        MEMORY_CONSOLIDATION_TIMEOUT_SECONDS="60",
    )  # fmt: skip
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, (out, err)
    with connect(shared_url) as backend:
        _assert_folded_once(backend.store, users)
