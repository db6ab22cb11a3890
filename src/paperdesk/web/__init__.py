"""The web site and JSON API (FastAPI + Jinja2, served by uvicorn): see `app.create_app`."""
