"""`paperdesk.web.asgi:app` for ASGI servers: the app on `$PAPERDESK_DB`."""

from paperdesk.store import default_db_path
from paperdesk.web.app import create_app

app = create_app(default_db_path())
