"""`/api/status`: how far the stages after ingest are (`paperdesk.pipeline.status`), and
the status line every page shows while they run."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from paperdesk import pipeline


def of(request: Request) -> dict[str, Any]:
    """The pipeline status for the request's store."""
    from paperdesk.web.pages import store_of

    return pipeline.status(store_of(request))


def register(app: FastAPI) -> None:
    from paperdesk.web.pages import json_response

    @app.get("/api/status", summary="How far the stages after ingest are")
    def status_api(request: Request) -> Response:
        """`state`: `running` (`stage` names the one at work), `ready`, `failed`
        (`error`), `interrupted` (its process is gone; the next run resumes) or `idle`
        (no run recorded); `stages`: each stage's state, times, progress and report."""
        resp = json_response(of(request))
        resp.headers["Cache-Control"] = "no-store"
        return resp
