"""Progress bars for long work: shown on a terminal, silent in pipes, cron and CI."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from paperdesk.settings import PROGRESS

if TYPE_CHECKING:
    from tqdm import tqdm


def enabled() -> bool:
    """Bars only when stderr is a terminal and the user has not asked for quiet."""
    forced = PROGRESS.get()
    if forced is not None:
        return forced
    return sys.stderr.isatty() and not os.environ.get("CI")


def progress(total: float | None = None, desc: str = "", unit: str = "it", **kw: Any) -> tqdm:
    """A tqdm bar (disabled unless `enabled()`); use `.update(n)` and close it (or `with`).

    tqdm is imported here, not with the module: ingest's worker processes import this module
    (through `paperdesk.ingest`) without showing a bar, and tqdm cost each ~0.05 CPU-s."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not enabled(),
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
        **kw,
    )
