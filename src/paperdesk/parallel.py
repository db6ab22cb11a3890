"""The one place paperdesk runs work in other processes: a map over batches.

    for result in parallel.map_batches(fn, batches):   # results in input order
        ...

`fn(batch)` runs for every batch on a pool of `settings.WORKERS` processes (default: the
CPU count) and the results come back in the order the batches went in. A stage hands over
plain data (lists of tuples, bytes, dataclasses) and gets plain data back; `fn` must be a
module-level function so a worker can import it. At most `ahead × workers` batches are in
flight, so memory stays bounded whatever the length of `batches`.

Serial path: with one worker, with a single batch, or from a program whose workers could
not start (a script read from stdin: spawned workers re-import `__main__`), `fn` runs in
this process, batch by batch, with the same results. Stages therefore need no serial
branch of their own; the differential tests run both paths and compare.

Errors: an exception raised by `fn` in a worker is raised here, as itself, when its batch's
result is reached (the results before it are yielded first); the batches after it are
cancelled. An exception raised while producing `batches` (a truncated input …) is raised
likewise after the results of every batch produced before it. A worker that dies (killed,
out of memory) or cannot start raises `PaperdeskError` naming the setting to fall back on.
Closing the generator early (a `break`, an error in the consumer) shuts the pool down.

A worker whose parent is killed outright ends itself within a second.

Workers are started with `spawn`, never `fork`: the parent holds SQLite handles and
threads. Starting them costs each its imports (~0.5 s of CPU), so callers use the pool for
inputs big enough to pay for that and pass `workers=1` (or small inputs) otherwise.
`initializer(*initargs)` runs once in each worker (e.g. to open a read-only connection),
and once in this process before the serial path, so `fn` finds the same state either way.

The one exception is `fork_map`, for the author stage: its workers need large read-only
state (a million signatures' arrays, name statistics, the pair model) that costs more to
pickle than the work it feeds, so they are forked and read it copy-on-write through
`shared()`. A forked worker must not use the parent's connections: it opens its own.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from paperdesk.errors import PaperdeskError
from paperdesk.settings import WORKERS

T = TypeVar("T")
R = TypeVar("R")

AHEAD = 4
"""Batches queued or in work per worker: enough that the workers never run dry while the
consumer is busy with a lump of its own (a commit, a checkpoint)."""


def workers() -> int:
    """The pool size: `settings.WORKERS`."""
    return WORKERS.get()


def can_spawn() -> bool:
    """Whether worker processes can start here: spawned workers re-import `__main__`, which
    a program read from stdin (`python -`) or `-c` has no file for."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return main_file is None or os.path.exists(main_file)


def map_batches(
    fn: Callable[[T], R],
    batches: Iterable[T],
    *,
    processes: int | None = None,
    initializer: Callable[..., object] | None = None,
    initargs: tuple[Any, ...] = (),
    ahead: int = AHEAD,
) -> Iterator[R]:
    """`fn(batch)` for each batch, in order, on `processes` workers (default
    `settings.WORKERS`); serially in this process when that is 1, when there is a single
    batch, or when workers cannot start here (see the module docstring)."""
    n = workers() if processes is None else processes
    it = iter(batches)
    first: list[T] = []
    broken: Exception | None = None
    if n > 1 and can_spawn():
        try:  # a single batch is not worth starting processes for
            while len(first) < 2:
                first.append(next(it))
        except StopIteration:
            pass
        except Exception as exc:  # noqa: BLE001 - raised after the batch before it
            broken = exc
        if len(first) == 2:
            yield from _pooled(fn, first, it, n, initializer, initargs, max(1, ahead))
            return
    if initializer is not None:
        initializer(*initargs)
    yield from map(fn, first)
    if broken is not None:
        raise broken
    yield from map(fn, it)


def can_fork() -> bool:
    """Whether `fork_map` can fork here (not on platforms without `fork`)."""
    return "fork" in mp.get_all_start_methods()


_SHARED: Any = None


def shared() -> Any:
    """The `state` of the `fork_map` call running this worker (or this process)."""
    return _SHARED


def fork_map(
    fn: Callable[[T], R], items: Iterable[T], *, state: Any, processes: int | None = None
) -> list[R]:
    """`[fn(item) for item in items]`, computed by `processes` workers (default
    `settings.WORKERS`) forked from this process, where `shared()` returns `state`; in this
    process, with the same results, for one worker, one item, or no `fork`."""
    global _SHARED
    n = workers() if processes is None else processes
    todo = list(items)
    _SHARED = state
    try:
        if n > 1 and len(todo) > 1 and can_fork():
            with mp.get_context("fork").Pool(min(n, len(todo))) as pool:
                return pool.map(fn, todo, chunksize=1)
        return [fn(x) for x in todo]
    finally:
        _SHARED = None


def _pooled(
    fn: Callable[[T], R],
    first: list[T],
    rest: Iterator[T],
    n: int,
    initializer: Callable[..., object] | None,
    initargs: tuple[Any, ...],
    ahead: int,
) -> Iterator[R]:
    pool = ProcessPoolExecutor(
        n, mp_context=mp.get_context("spawn"), initializer=_start_worker,
        initargs=(os.getpid(), initializer, initargs),
    )
    pending: deque[Future[R]] = deque()
    source: Iterator[T] = _chain(first, rest)
    failed: BaseException | None = None
    try:
        while True:
            while failed is None and len(pending) < ahead * n:
                try:
                    batch = next(source)
                except StopIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - raised after the batches before it
                    failed = exc
                    break
                try:  # a pool broken since the last result refuses new work
                    pending.append(pool.submit(fn, batch))
                except BrokenProcessPool as exc:
                    raise _died(exc) from exc
            if not pending:
                break
            future = pending.popleft()
            try:
                result = future.result()
            except BrokenProcessPool as exc:
                raise _died(exc) from exc
            yield result
        if failed is not None:
            raise failed
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _died(exc: BrokenProcessPool) -> PaperdeskError:
    return PaperdeskError(
        f"a worker process died or could not start ({exc}); "
        f"set {WORKERS.env}=1 to run in one process"
    )


def _start_worker(
    parent: int, initializer: Callable[..., object] | None, initargs: tuple[Any, ...]
) -> None:
    """A worker's first act: leave when the parent is gone, then the caller's initializer.

    A parent killed outright (SIGKILL, out of memory) cannot shut the pool down, and an
    idle worker waits on its task queue forever (it holds that queue's write end itself,
    so it never sees the end of it): a thread checks every half second that the parent is
    still there and otherwise ends the process at once."""
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)  # no parent to report to, nothing of this process to keep


def _chain(first: list[T], rest: Iterator[T]) -> Iterator[T]:
    yield from first
    yield from rest
