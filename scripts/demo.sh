#!/usr/bin/env bash
# The main job on the embedded default: get real records, ingest them, and serve the site
# at once while the later stages (works, authors, subjects, search: `paperdesk pipeline`)
# run in the background; pages improve as each stage commits, and a status line on every
# page and /api/status say how far they are. Every stage is incremental: a re-run (or a run
# after a kill) only does what is left.
# Data: $PAPERDESK_DEMO_DATA (files, space-separated), else the shared daily feed next to
# the checkout, else a live harvest of the last days of arXiv (needs internet).
set -euo pipefail
cd "$(dirname "$0")/.."
PD=".venv/bin/paperdesk"
export PAPERDESK_DB="${PAPERDESK_DB:-var/paperdesk.db}"
mkdir -p "$(dirname "$PAPERDESK_DB")"

shared="../shared/data/arxiv"
if [ -n "${PAPERDESK_DEMO_DATA:-}" ]; then
    # shellcheck disable=SC2086
    $PD ingest --on-error skip $PAPERDESK_DEMO_DATA
elif compgen -G "$shared/daily-feed-*.jsonl.gz" >/dev/null; then
    $PD ingest --on-error skip "$shared"/daily-feed-*.jsonl.gz
else
    since=$(date -u -d '3 days ago' +%F)
    echo "no local data: harvesting arXiv cs since $since (polite: this takes a while)" >&2
    $PD harvest arxiv --set cs --from "$since"
fi

exec $PD serve --host 127.0.0.1 --port "${PAPERDESK_PORT:-8000}" --background-stages
