"""paperdesk: a self-hosted index of research papers.

The public library API lives in the submodules: `paperdesk.model` (the one data shape every
stage passes around), `paperdesk.sources` (pure parsers, one per format), `paperdesk.store`
(the only package that talks to a database), `paperdesk.ingest` (parse -> normalise -> store)
and `paperdesk.harvest` (live harvesters).
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"

# The compiled build of the ingest hot path (paperdesk.native): the one PAPERDESK_NATIVE
# names (`off`: none), else the environment's own when `make` built one. Checked without
# importing paperdesk.native (~40 ms a process), paid only when a build is used.
from paperdesk.settings import NATIVE as _NATIVE_SETTING  # noqa: E402

_NATIVE = _NATIVE_SETTING.get()
if (
    _os.path.exists(_os.path.join(_sys.prefix, "paperdesk-native", "paperdesk-native.json"))
    if _NATIVE is None
    else _NATIVE.strip().lower() not in ("", "0", "off", "no")
):
    from paperdesk.native import activate_from_env as _activate_from_env

    _activate_from_env()
