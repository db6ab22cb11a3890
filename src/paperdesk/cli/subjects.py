"""`subjects list|predict|train`, `subjects WORK_ID`, `classify`: arXiv subjects, given and
predicted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
import orjson

from paperdesk import pipeline
from paperdesk.cli import Ctx, emit_json, emit_jsonl, handle_errors, json_option, main, pass_ctx

# `subjects W12` routes to `subjects show W12`, exactly as `work W12` does.
from paperdesk.cli.works import _WorkGroup as ShowByDefault
from paperdesk.errors import PaperdeskError
from paperdesk.subjects.classify import subject_counts, work_subjects
from paperdesk.subjects.taxonomy import load as load_taxonomy

DEFAULT_FEED = Path("../shared/data/arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz")
_PREDICT_BATCH = 256
_MAX_LINE = 1_000_000
"""Longer input lines are rejected, not parsed: one prediction needs a title and abstract."""


# The subjects stage's own model loading and prediction shape (`paperdesk.pipeline`).
_model = pipeline.load_subject_model
_scored = pipeline.scored


@main.group(cls=ShowByDefault)
def subjects() -> None:
    """arXiv subjects: the taxonomy, a work's subjects, predictions, training."""


@subjects.command("show")
@click.argument("work_id")
@json_option
@pass_ctx
@handle_errors
def show(ctx: Ctx, work_id: str, as_json: bool) -> None:
    """A work's subjects (given by a source, or predicted) and each record's."""
    w = work_subjects(ctx.store, work_id)
    if as_json:
        emit_json(w)
        return
    kind = "predicted" if w["predicted"] else "given"
    click.echo(f"{w['work_id']}  subjects ({kind if w['subjects'] else 'none'}):")
    for e in w["subjects"]:
        click.echo(f"  {_line(e)}")
    for r in w["records"]:
        subs = ", ".join(e["subject"] + ("?" if e["predicted"] else "") for e in r["subjects"])
        codes = " ".join(c["code"] for c in r["codes"])
        click.echo(f"  {r['key']:<32} {subs or '-'}{'  codes: ' + codes if codes else ''}")


def _line(e: dict[str, Any]) -> str:
    name = e.get("name") or ""
    if e.get("predicted"):
        return f"{e['subject']:<20} {name}  (predicted, p={e['probability']:.2f})"
    return f"{e['subject']:<20} {name}"


@subjects.command("list")
@json_option
@click.option("--legacy", is_flag=True, help="Also list defunct archives and legacy codes.")
@pass_ctx
@handle_errors
def list_(ctx: Ctx, as_json: bool, legacy: bool) -> None:
    """The arXiv taxonomy by group, with the number of works given / predicted each subject."""
    tax = load_taxonomy()
    counts = subject_counts(ctx.store)
    rows: list[dict[str, Any]] = []
    for cat in tax.subjects():
        if not cat.active and not legacy:
            continue
        rows.append(
            {
                "subject": cat.id,
                "name": cat.name,
                "archive": cat.archive,
                "group": cat.group,
                "group_name": tax.groups.get(cat.group, cat.group),
                "active": cat.active,
                "aliases": list(cat.aliases),
                "works_given": counts["given"].get(cat.id, 0),
                "works_predicted": counts["predicted"].get(cat.id, 0),
            }
        )
    rows.sort(key=lambda r: (str(r["group_name"]), str(r["subject"])))
    if as_json:
        emit_json(rows)
        return
    click.echo(f"  {'subject':<20} {'works':>7} {'pred.':>8}  name")
    group = None
    for r in rows:
        if r["group_name"] != group:
            group = r["group_name"]
            click.echo(group)
        alias = f" (= {', '.join(r['aliases'])})" if r["aliases"] else ""
        legacy_mark = "" if r["active"] else " [legacy]"
        click.echo(
            f"  {r['subject']:<20} {r['works_given']:>7,} {r['works_predicted']:>7,}?  "
            f"{r['name']}{alias}{legacy_mark}"
        )


def _read_lines(fh: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object or error message) for each non-blank input line."""
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        if len(line) > _MAX_LINE:
            yield n, f"line longer than {_MAX_LINE:,} bytes"
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            yield n, f"not JSON: {exc}"
            continue
        if not isinstance(obj, dict):
            yield n, "not a JSON object"
            continue
        yield n, obj


def _text(obj: dict[str, Any], *names: str) -> str | None:
    for name in names:
        v = obj.get(name)
        if isinstance(v, str):
            return v
    return None


@subjects.command("predict")
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--top", default=5, show_default=True, help="At most this many subjects each.")
@click.option(
    "--min-probability",
    default=0.4,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Secondary subjects need at least this probability (the primary is always shown).",
)
@handle_errors
def predict(
    file: IO[bytes], as_json: bool, model_path: Path | None, top: int, min_probability: float
) -> None:
    """Predict subjects for JSON lines with `title` / `abstract` (or `summary`) and an
    optional `id`, from FILE or stdin; one prediction per input line, no store needed."""
    model = _model(model_path)
    batch: list[tuple[int, dict[str, Any] | str]] = []

    def flush() -> None:
        ok = [(n, o) for n, o in batch if isinstance(o, dict)]
        preds = model.predict(
            [(_text(o, "title"), _text(o, "abstract", "summary")) for _, o in ok],
            max_subjects=top,
            min_probability=min_probability,
        )
        by_line = {n: p for (n, _), p in zip(ok, preds, strict=True)}
        for n, o in batch:
            _emit_prediction(n, o, by_line.get(n), as_json)
        batch.clear()

    for item in _read_lines(file):
        batch.append(item)
        if len(batch) >= _PREDICT_BATCH:
            flush()
    if batch:
        flush()


def _emit_prediction(n: int, obj: dict[str, Any] | str, pred: Any, as_json: bool) -> None:
    if isinstance(obj, str):
        if as_json:
            emit_jsonl({"line": n, "id": None, "error": obj, "subjects": []})
        else:
            click.echo(f"line {n}: {obj}", err=True)
        return
    ident = obj.get("id")
    ident = ident if isinstance(ident, str | int) and not isinstance(ident, bool) else None
    subs = _scored(pred)
    if as_json:
        emit_jsonl({"line": n, "id": ident, "subjects": subs, "predicted": True})
        return
    label = str(ident) if ident is not None else f"line {n}"
    shown = "  ".join(f"{s['subject']} {s['primary_probability']:.2f}" for s in subs[:1])
    shown += "".join(f"  +{s['subject']} {s['probability']:.2f}" for s in subs[1:])
    click.echo(f"{label}\t{shown or '(no text)'}")


@subjects.command("train")
@click.option(
    "--feed",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help=f"arXiv daily feed (JSON lines, .gz ok); default {DEFAULT_FEED}.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Model file (default: where `predict`/`classify` look).",
)
@click.option(
    "--test-months",
    default=1,
    show_default=True,
    help="Latest months held out for the test figures.",
)
@click.option(
    "--store",
    "from_store",
    is_flag=True,
    help="Train on the store's own records that came with arXiv subjects (--db).",
)
@json_option
@pass_ctx
@handle_errors
def train_cmd(
    ctx: Ctx, feed: Path | None, out: Path | None, test_months: int, from_store: bool,
    as_json: bool,
) -> None:
    """Train the subject model: earlier months train, the month before the held-out
    month(s) calibrates (the temperature and the weights of the context evidence: the
    authors' and venue's earlier subjects, the last 14 days' mix), the latest month(s)
    test. With --store, the store's records with arXiv subjects are the data.
    Deterministic for the same data."""
    from paperdesk.subjects.classifier import default_model_path
    from paperdesk.subjects.training import (
        examples_from_store,
        train_from_examples,
        train_from_feed,
    )

    if from_store:
        if feed is not None:
            raise PaperdeskError("give --feed or --store, not both")
        examples = examples_from_store(ctx.store)
        months = sorted({e.month for e in examples})
        if len(months) < test_months + 2:
            raise PaperdeskError(
                f"the store's records with arXiv subjects span {len(months)} month(s); "
                f"training needs at least {test_months + 2}"
            )
        model, report, _ = train_from_examples(examples, test_months=test_months)
    else:
        feed = feed or DEFAULT_FEED
        if not feed.exists():
            raise PaperdeskError(f"feed {feed} not found (give --feed)")
        model, report, _ = train_from_feed(feed, test_months=test_months)
    path = model.save(out or default_model_path())
    data = {**report.__dict__, "model": str(path), "model_bytes": path.stat().st_size}
    if as_json:
        emit_json(data)
        return
    m = report.metrics
    click.echo(
        f"trained on {report.train_papers:,} papers ({report.train_months[0]}…"
        f"{report.train_months[-1]}), {report.classes} subjects, in {report.seconds:.0f}s; "
        f"test {', '.join(report.test_months)} ({report.test_papers:,} papers): "
        f"top-1 {m['top1']:.3f}, top-3 {m['top3']:.3f}, macro-F1 {m['macro_f1']:.3f}, "
        f"ECE {m['ece']:.3f}\nmodel: {path} ({data['model_bytes'] / 1e6:.1f} MB)"
    )


@main.command()
@click.option("--all", "full", is_flag=True, help="Re-classify every record (e.g. a new model).")
@click.option("--model", "model_path", type=click.Path(dir_okay=False, path_type=Path))
@json_option
@pass_ctx
@handle_errors
def classify(ctx: Ctx, full: bool, model_path: Path | None, as_json: bool) -> None:
    """Record the subjects of new records: the source's where given, else predicted.

    Without a trained model the source-given subjects are still recorded and the records
    that need a prediction wait (`pending`) for a run after `paperdesk subjects train`."""
    report = pipeline.run(ctx.store, ["subjects"], full=full, model_path=model_path)["subjects"]
    if as_json:
        emit_json(report)
        return
    click.echo(
        f"{report['records']:,} record(s) in {report['seconds']:.1f}s: {report['given']:,} with"
        f" subjects from the source, {report['predicted']:,} predicted, {report['no_text']:,}"
        " without text"
    )
    if report["pending"]:
        click.echo(
            f"{report['pending']:,} record(s) without subjects wait for a model: run "
            f"`paperdesk subjects train`, then `paperdesk classify` again",
            err=True,
        )
