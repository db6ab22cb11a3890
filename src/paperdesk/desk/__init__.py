"""The personal desk (issue 20): a user's library, its import and export, recommendations,
follows, saved searches, private Atom feeds and the e-mail digest.

Everything here reads and writes through the store's repositories (`store.desk`,
`store/desk_base.py`; the catalog's read queries for works) and returns plain dicts, so
the CLI (`cli/desk.py`) and the web pages (`web/desk.py`) are thin skins over it.
Accounts themselves are `paperdesk.store.curators`.
"""
