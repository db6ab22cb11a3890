"""`python -m paperdesk` is the CLI."""

from paperdesk.cli import run

run()
