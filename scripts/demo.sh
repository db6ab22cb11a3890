#!/usr/bin/env bash
# The main job on the embedded default: get real records, ingest them, derive works,
# authors, subjects and indexes, print a summary (and, once the web layer exists, serve).
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

# Later stages, each incremental: a re-run only processes what is new or changed.
$PD resolve             # works, author profiles, and the search index (keyword + vectors)
$PD classify            # subjects: the source's, else predicted by the shipped model
$PD stats
exec $PD serve --host 127.0.0.1 --port "${PAPERDESK_PORT:-8000}"
