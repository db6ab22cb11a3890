"""`search`, `related`, `similar`, `reindex`: finding works.

`search` prints works (not records) best first; `--queries FILE` runs many queries with
the models and indexes loaded once and prints one JSON line per query.

The three queries read the index as the web does (`SearchIndex(reader=True)`): they use the
HNSW file as the indexer last saved it and never rebuild or write it. A query run while
`paperdesk pipeline` was still embedding used to find the file behind the stored vectors
and rebuild it first — 40 s for one search on the 102k feed, racing the indexer's own save.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson

from paperdesk.cli import Ctx, emit_json, emit_jsonl, handle_errors, json_option, main, pass_ctx
from paperdesk.errors import PaperdeskError, QueryError
from paperdesk.search.engine import MODES, Hit, SearchIndex, SearchResult


def _mark(text: str, spans: list[tuple[int, int]]) -> str:
    """Highlight matches for a terminal (bold) — ranges are character offsets."""
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(click.style(text[a:b], bold=True))
        last = b
    out.append(text[last:])
    return "".join(out)


def _titled(ctx: Ctx, res: SearchResult) -> dict[str, Any]:
    """The JSON of a result, each hit with its `display_title` (docs/cli.md)."""
    from paperdesk.catalog import with_display_titles

    data = res.to_dict()
    with_display_titles(ctx.store, data["hits"])
    return data


def _shown(ctx: Ctx, res: SearchResult) -> dict[str, str]:
    return {h["work_id"]: h["display_title"] for h in _titled(ctx, res)["hits"]}


def _print_hits(res: SearchResult, offset: int = 0, titles: dict[str, str] | None = None) -> None:
    found = f"{res.total} works" if res.total is not None else f"{len(res.hits)} shown (not counted)"
    click.echo(f"{found} · {res.mode} · {res.took_ms:.0f} ms")
    for i, h in enumerate(res.hits, start=offset + 1):
        _print_hit(i, h, (titles or {}).get(h.work_id))
    if res.facets:
        for name, vals in res.facets.items():
            click.echo(f"{name}: " + ", ".join(f"{v} ({c})" for v, c in vals[:12]))


def _print_hit(i: int, h: Hit, shown: str | None = None) -> None:
    authors = ", ".join(h.authors[:3]) + (" et al." if len(h.authors) > 3 else "")
    click.echo(f"{i:3d}. {click.style(shown or h.title or h.work_id, bold=True)}")
    meta = " · ".join(x for x in (authors, str(h.year or ""), " ".join(h.subjects[:3])) if x)
    click.echo(f"     {meta}")
    click.echo(f"     {h.work_id}  [{', '.join(h.keys)}]  score {h.score:.4f}")
    if h.snippet:
        click.echo("     " + _mark(h.snippet, h.highlights).replace("\n", " "))


def _read_queries(path: Path) -> list[tuple[str, str]]:
    """One query a line, or JSON lines with `id` and `query`."""
    out = []
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise QueryError(f"{path}, line {n}: not valid JSON ({e})") from e
            if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
                raise QueryError(f"{path}, line {n}: a JSON line needs a string 'query'")
            out.append((str(obj.get("id", n)), obj["query"]))
        else:
            out.append((str(n), line))
    return out


@main.command()
@click.argument("query", required=False)
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--offset", type=click.IntRange(0, 10_000), default=0)
@click.option("--sort", type=click.Choice(["relevance", "date"]), default="relevance", show_default=True)
@click.option("--facets", is_flag=True, help="Also count results by subject, year and source.")
@click.option("--no-count", is_flag=True,
              help="Don't count every match (total is null): on a large index keyword queries "
                   "then skip what cannot reach the top (2-3x faster at 1M works).")
@click.option("--queries", "queries_file", type=click.Path(path_type=Path, allow_dash=True),
              help="Run every query of FILE (one a line, or JSON lines with id and query).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (JSON lines with --queries).")
@pass_ctx
@handle_errors
def search(
    ctx: Ctx, query: str | None, mode: str, limit: int, offset: int, sort: str, facets: bool,
    no_count: bool, queries_file: Path | None, as_json: bool,
) -> None:
    """Search works: keyword (BM25 with field filters), semantic or hybrid (default).

    \b
    Syntax: words, "phrases", AND OR NOT (or + -), prefix*, (groups),
    author:NAME title:WORD abstract:WORD cat:cs.CV cat:cs.* subject:…
    year:2021 year:2020..2024 source:arxiv
    """
    ix = SearchIndex(ctx.store, reader=True)
    if queries_file is not None:
        for qid, q in _read_queries(queries_file):
            try:
                res = ix.search(q, mode, limit, offset, sort, facets, count=not no_count)  # type: ignore[arg-type]
                emit_jsonl({"id": qid} | _titled(ctx, res))
            except PaperdeskError as e:  # one bad query must not end a batch
                emit_jsonl({"id": qid, "query": q, "error": str(e)})
        return
    if not query:
        raise QueryError("give a QUERY or --queries FILE")
    res = ix.search(query, mode, limit, offset, sort, facets, count=not no_count)  # type: ignore[arg-type]
    if as_json:
        emit_json(_titled(ctx, res))
    else:
        _print_hits(res, offset, _shown(ctx, res))


@main.command()
@click.option("--text", "text", help="The text (an abstract, a paragraph); '-' reads stdin.")
@click.option("--filter", "filter_query", help='Restrict results, e.g. "year:2024.. cat:cs.*".')
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@json_option
@pass_ctx
@handle_errors
def related(ctx: Ctx, text: str | None, filter_query: str | None, limit: int, as_json: bool) -> None:
    """Works related to a pasted text."""
    if text is None or text == "-":
        text = sys.stdin.read()
    res = SearchIndex(ctx.store, reader=True).related(text, limit, filter_query)
    emit_json(_titled(ctx, res)) if as_json else _print_hits(res, 0, _shown(ctx, res))


@main.command()
@click.argument("work_id")
@click.option("--since", help="Only works from this year on.")
@click.option("--until", help="Only works up to this year.")
@click.option("--subject", help="Only works in this subject (cat:… syntax, e.g. cs.CL or cs.*).")
@click.option("--sort", type=click.Choice(["relevance", "date"]), default="relevance", show_default=True)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@json_option
@pass_ctx
@handle_errors
def similar(
    ctx: Ctx, work_id: str, since: str | None, until: str | None, subject: str | None,
    sort: str, limit: int, as_json: bool,
) -> None:
    """Works similar to WORK_ID (nearest in embedding space)."""
    for v, name in ((since, "--since"), (until, "--until")):
        if v is not None and not (v.isdigit() and len(v) == 4):
            raise QueryError(f"{name} takes a year such as 2024, not {v!r}")
    res = SearchIndex(ctx.store, reader=True).similar(work_id, limit, since, until, subject, sort)
    emit_json(_titled(ctx, res)) if as_json else _print_hits(res, 0, _shown(ctx, res))


@main.command()
@click.option("--no-embed", is_flag=True, help="Rebuild only the keyword index (vectors later).")
@click.option("--incremental", is_flag=True, help="Only bring the index up to date.")
@click.option("--embedder", help="Embedder name (default: the index's, else the default).")
@json_option
@pass_ctx
@handle_errors
def reindex(ctx: Ctx, no_embed: bool, incremental: bool, embedder: str | None, as_json: bool) -> None:
    """Rebuild the search indexes (keyword + vectors); stored vectors of unchanged texts are reused."""
    from paperdesk.search.indexer import reindex as full
    from paperdesk.search.indexer import update_index

    fn: Any = update_index if incremental else full
    rep = fn(ctx.store, embed=not no_embed, embedder=embedder)
    if as_json:
        emit_json(rep.__dict__)
    else:
        click.echo(
            f"{rep.works_indexed} works indexed, {rep.works_unchanged} unchanged; "
            f"{rep.vectors_computed} vectors computed, {rep.vectors_reused} reused; "
            f"{rep.seconds:.1f} s"
        )
