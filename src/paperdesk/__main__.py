"""`python -m paperdesk` is the CLI."""

from paperdesk.cli import main

main()
