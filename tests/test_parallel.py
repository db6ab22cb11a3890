"""`paperdesk.parallel.map_batches` and `fork_map`: the pool gives exactly the serial results, in order, and
errors come out where they happened, as themselves."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from paperdesk import parallel
from paperdesk.errors import PaperdeskError, ParseError

_PREFIX = ""


def _square_all(batch: list[int]) -> list[int]:
    return [x * x for x in batch]


def _pid(batch: list[int]) -> int:
    return os.getpid()


def _fail_on_13(batch: list[int]) -> list[int]:
    if 13 in batch:
        raise ParseError("unlucky", origin="numbers.txt", record_no=13)
    return batch


def _die(batch: list[int]) -> list[int]:
    if 5 in batch:
        os._exit(3)
    return batch


def _set_prefix(prefix: str) -> None:
    global _PREFIX
    _PREFIX = prefix


def _prefixed(batch: list[int]) -> list[str]:
    return [f"{_PREFIX}{x}" for x in batch]


def _batches(n: int, size: int = 3) -> Iterator[list[int]]:
    for start in range(0, n, size):
        yield list(range(start, min(n, start + size)))


@pytest.mark.parametrize("processes", [1, 2])
def test_results_come_in_input_order(processes: int) -> None:
    got = list(parallel.map_batches(_square_all, _batches(100), processes=processes, ahead=1))
    assert got == [_square_all(b) for b in _batches(100)]


def test_the_pool_runs_elsewhere_and_one_batch_runs_here() -> None:
    pids = set(parallel.map_batches(_pid, _batches(30), processes=2))
    assert os.getpid() not in pids
    assert list(parallel.map_batches(_pid, _batches(3), processes=2)) == [os.getpid()]
    assert set(parallel.map_batches(_pid, _batches(30), processes=1)) == {os.getpid()}


def test_the_setting_sizes_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERDESK_WORKERS", "1")
    assert parallel.workers() == 1
    assert set(parallel.map_batches(_pid, _batches(30))) == {os.getpid()}
    monkeypatch.delenv("PAPERDESK_WORKERS")
    assert parallel.workers() == (os.cpu_count() or 1)


def test_each_worker_runs_the_initializer() -> None:
    got = list(parallel.map_batches(_prefixed, _batches(9), processes=2,
                                    initializer=_set_prefix, initargs=("n",)))
    assert got == [[f"n{x}" for x in b] for b in _batches(9)]


@pytest.mark.parametrize("processes", [1, 2])
def test_an_error_in_a_worker_is_raised_as_itself_after_the_batches_before(processes: int) -> None:
    got: list[list[int]] = []
    with pytest.raises(ParseError) as info:
        for result in parallel.map_batches(_fail_on_13, _batches(60), processes=processes):
            got.append(result)
    assert (info.value.origin, info.value.record_no, info.value.message) == (
        "numbers.txt", 13, "unlucky")
    assert got == list(_batches(12))


@pytest.mark.parametrize("processes", [1, 2])
def test_an_error_in_the_input_comes_after_every_batch_before_it(processes: int) -> None:
    def broken() -> Iterator[list[int]]:
        yield from _batches(12)
        raise ParseError("truncated", origin="in.gz", record_no=13)

    got: list[list[int]] = []
    with pytest.raises(ParseError, match="truncated"):
        for result in parallel.map_batches(_square_all, broken(), processes=processes):
            got.append(result)
    assert got == [_square_all(b) for b in _batches(12)]


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    with pytest.raises(PaperdeskError, match="PAPERDESK_WORKERS=1"):
        list(parallel.map_batches(_die, _batches(30), processes=2))


def test_a_worker_that_dies_while_the_caller_is_busy_is_the_same_error() -> None:
    # the pool breaks while the caller holds a result: the next submit, not a result,
    # is what sees it (a flaky CI failure until submit was wrapped too)
    results = parallel.map_batches(_die, _batches(30), processes=2, ahead=1)
    with pytest.raises(PaperdeskError, match="PAPERDESK_WORKERS=1"):
        for _ in results:
            time.sleep(1.0)


def test_stopping_early_shuts_the_pool_down() -> None:
    results = parallel.map_batches(_square_all, _batches(3000), processes=2)
    assert next(results) == [0, 1, 4]
    results.close()  # must return promptly, leaving no worker behind
    import multiprocessing

    assert multiprocessing.active_children() == []


KILLED_PARENT = """
import multiprocessing, time
from paperdesk import parallel
results = parallel.map_batches(time.sleep, [0.0, 0.0, 60.0, 60.0, 60.0], processes=2)
next(results)
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_workers_end_when_their_parent_is_killed() -> None:
    """A SIGKILLed ingest cannot shut its pool down: its workers must not stay behind."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", KILLED_PARENT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _scaled(k: int) -> tuple[int, int]:
    """k times the shared factor, and the worker's pid."""
    factor: int = parallel.shared()["factor"]
    return k * factor, os.getpid()


@pytest.mark.skipif(not parallel.can_fork(), reason="no fork on this platform")
def test_fork_map_shares_state_and_keeps_the_order() -> None:
    state = {"factor": 7, "big": list(range(100_000))}
    got = parallel.fork_map(_scaled, range(12), state=state, processes=2)
    assert [v for v, _ in got] == [7 * k for k in range(12)]
    assert os.getpid() not in {pid for _, pid in got}  # computed in forked workers
    serial = parallel.fork_map(_scaled, range(12), state=state, processes=1)
    assert serial == [(7 * k, os.getpid()) for k in range(12)]
    assert parallel.shared() is None  # cleared after the call
    assert parallel.fork_map(_scaled, [3], state=state, processes=2) == [(21, os.getpid())]
