"""The stages after ingest, in order, incrementally: the one place that runs them.

    ingest ──► works ──► authors ──► subjects ──► search
    (records)  (work_*)  (author_*)  (record_subjects)  (keyword + vector index)

`paperdesk resolve`, `paperdesk pipeline`, `paperdesk serve --background-stages` and
`make demo` all call `run`. Each stage resumes from its own checkpoint and commits batch by
batch, so readers (the web site) only ever see whole batches, and a kill at any moment
leaves a store that the next `run` finishes. Pages read whatever has committed: before the
works stage a record shows under its record key, before the subjects stage without
predicted subjects, before the search stage it is not found by search.

Progress is kept in the store's `pipeline` checkpoint (the store's own checkpoint table,
so the web server's process sees what a pipeline process is doing): `status(store)` is what
`/api/status`, the pages' status line and `paperdesk status` show.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paperdesk.store.base import Store

STAGES = ("works", "authors", "subjects", "search")
"""Every stage after ingest, in the order `run` takes them. Subjects before search: the
search documents do not read the predicted subjects, and classifying is quick."""
CHECKPOINT = "pipeline"
"""The store checkpoint holding the status of the latest run."""

StageFn = Callable[[Store, bool, Callable[[dict[str, Any]], None]], dict[str, Any]]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def works(store: Store, full: bool, note: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Records -> works (`resolve_works`); `note` hears the running totals after each
    committed batch."""
    from paperdesk.resolve.works_run import resolve_works

    report = resolve_works(store, full=full, progress=lambda r: note({"records": r.records}))
    return report.to_dict()


def authors(store: Store, full: bool, note: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Signatures -> author profiles (`resolve_authors`)."""
    from paperdesk.resolve.authors import resolve_authors

    return resolve_authors(store, full=full).to_dict()


def load_subject_model(path: Path | None) -> Any:
    """The subject classifier at `path` (else the shipped one); a bad file is a
    PaperdeskError naming it."""
    from paperdesk.errors import PaperdeskError
    from paperdesk.subjects.classifier import load_model

    try:
        return load_model(path)
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise PaperdeskError(str(exc)) from exc


def scored(pred: Any) -> list[dict[str, Any]]:
    """A classifier prediction as the subjects stage stores it."""
    return [
        {"subject": s.subject, "probability": s.probability,
         "primary_probability": s.primary_probability}
        for s in pred.subjects
    ]


def subjects(
    store: Store, full: bool, note: Callable[[dict[str, Any]], None],
    *, model_path: Path | None = None,
) -> dict[str, Any]:
    """Subjects of new records: the source's, else predicted by the model (`model_path`,
    else the shipped one; without any, records needing a prediction wait as `pending`)."""
    from paperdesk.subjects.classifier import default_model_path
    from paperdesk.subjects.classify import classify

    predictor = None
    model_id = ""
    if model_path is not None or default_model_path().exists():
        model = load_subject_model(model_path)
        model_id = str(model.meta.get("model_id") or "model")

        def predictor(
            items: Sequence[tuple[str | None, str | None]],
            contexts: Sequence[Mapping[str, Mapping[str, float]]],
        ) -> list[list[dict[str, Any]]]:
            from paperdesk.subjects.context import evidence

            kinds = sorted(model.context_weights)
            ev = evidence(contexts, model.classes, model.prior, kinds) if kinds else None
            return [scored(p) for p in model.predict(items, context=ev)]

    return classify(store, predictor, model_id=model_id, full=full).to_dict()


def search(store: Store, full: bool, note: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The keyword and vector indexes brought up to date with new and changed works (also
    after a `full` run: work ids are kept; `paperdesk reindex` rebuilds from scratch)."""
    from paperdesk.search.indexer import update_index  # ~0.35 s to import

    return dataclasses.asdict(update_index(store))


_STAGE_FNS: dict[str, StageFn] = {
    "works": works, "authors": authors, "subjects": subjects, "search": search,
}


def run(
    store: Store,
    stages: Sequence[str] = STAGES,
    *,
    full: bool = False,
    model_path: Path | None = None,
    on_stage: Callable[[str, float, dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run `stages` (a subset of `STAGES`, taken in `STAGES` order) and return each one's
    report; the status in the store's `pipeline` checkpoint says what is running, what
    has finished (with its report) and what waits. `on_stage(name, seconds, report)` hears
    each stage as it finishes. A stage that raises marks the run `failed` and the error goes
    on to the caller; the stages before it have committed and are not run again."""
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; stages are {list(STAGES)}")
    todo = [s for s in STAGES if s in stages]
    state: dict[str, Any] = {
        "state": "running", "started_at": _now(), "finished_at": None,
        "pid": os.getpid(), "host": socket.gethostname(), "error": None,
        "stages": [{"name": s, "state": "waiting", "started_at": None, "finished_at": None,
                    "seconds": None, "progress": {}, "report": None} for s in todo],
    }
    _save(store, state)
    fns: dict[str, StageFn] = {
        **_STAGE_FNS,
        "subjects": functools.partial(subjects, model_path=model_path),
    }
    reports: dict[str, dict[str, Any]] = {}
    for entry in state["stages"]:
        name = entry["name"]
        entry.update(state="running", started_at=_now())
        _save(store, state)
        t0 = time.perf_counter()

        def note(progress: dict[str, Any], entry: dict[str, Any] = entry) -> None:
            entry["progress"] = progress
            _save(store, state)

        try:
            report = fns[name](store, full, note)
        except BaseException as exc:
            entry.update(state="failed", finished_at=_now())
            state.update(state="failed", finished_at=_now(), error=f"{name}: {exc}"[:500])
            _save(store, state)
            raise
        entry.update(state="done", finished_at=_now(),
                     seconds=round(time.perf_counter() - t0, 2), report=report)
        reports[name] = report
        _save(store, state)
        if on_stage:
            on_stage(name, entry["seconds"], report)
    state.update(state="ready", finished_at=_now())
    _save(store, state)
    return reports


def _save(store: Store, state: dict[str, Any]) -> None:
    store.set_checkpoint(CHECKPOINT, {**state, "updated_at": _now()})


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(store: Store) -> dict[str, Any]:
    """The latest run's status, for `/api/status`: `state` is `running`, `ready` (every
    stage of the run finished), `failed` (`error` says where), `interrupted` (the process
    that ran it is gone: the next run resumes), or `idle` (no run recorded in this store).
    `stage` names the running stage, if any."""
    saved = store.get_checkpoint(CHECKPOINT)
    if not isinstance(saved, dict):
        return {"state": "idle", "stage": None, "stages": [], "started_at": None,
                "finished_at": None, "updated_at": None, "error": None}
    out = dict(saved)
    if (
        out.get("state") == "running" and out.get("host") == socket.gethostname()
        and isinstance(out.get("pid"), int) and not _alive(out["pid"])
    ):
        out["state"] = "interrupted"
    running = [s["name"] for s in out.get("stages", []) if s.get("state") == "running"]
    out["stage"] = running[0] if running and out["state"] == "running" else None
    out.pop("pid", None)
    out.pop("host", None)
    return out
