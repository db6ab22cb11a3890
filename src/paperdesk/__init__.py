"""paperdesk: a self-hosted index of research papers.

The public library API lives in the submodules: `paperdesk.model` (the one data shape every
stage passes around), `paperdesk.sources` (pure parsers, one per format), `paperdesk.store`
(the only package that talks to a database), `paperdesk.ingest` (parse -> normalise -> store)
and `paperdesk.harvest` (live harvesters).
"""

__version__ = "0.1.0"
