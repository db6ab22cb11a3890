"""The optional daily e-mail digest: each user who asked for it gets the works new for them
since the last digest (the "for you" ranking, nothing shown before), through SMTP."""

from __future__ import annotations

import html
import re
import smtplib
from email.message import EmailMessage
from typing import Any

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store.base import Store, now

_EMAIL = re.compile(r"^[^@\s<>\"',;]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$")


def set_email(store: Store, username: str, email: str | None, digest: bool) -> None:
    """The address the digest goes to, and whether it is sent (no address: no digest)."""
    if email is not None and not _EMAIL.match(email):
        raise PaperdeskError(f"{email[:80]!r} is not an e-mail address")
    if not store.desk.set_email(username, email, digest and email is not None):
        raise NotFoundError(f"no user {username!r}")


def compose(username: str, to: str, sender: str, base_url: str, hits: list[dict[str, Any]], day: str) -> EmailMessage:
    """The digest: plain text and an HTML twin (every value escaped), a link per work."""
    msg = EmailMessage()
    msg["Subject"] = f"paperdesk: {len(hits)} new paper{'s' if len(hits) != 1 else ''} for you ({day})"
    msg["From"] = sender
    msg["To"] = to
    lines = [f"New for {username} since your last visit ({day}):", ""]
    items = []
    for n, h in enumerate(hits, 1):
        url = f"{base_url}papers/{h['work_id']}"
        authors = ", ".join(h["authors"][:6]) + (" et al." if len(h["authors"]) > 6 else "")
        lines += [f"{n}. {h['title']}", f"   {authors}", f"   {url}"]
        lines += [f"   - {r}" for r in h["reasons"]] + [""]
        items.append(f'<li><a href="{html.escape(url)}">{html.escape(h["title"])}</a><br>'
                     f"{html.escape(authors)}<br><small>{html.escape('; '.join(h['reasons']))}</small></li>")
    lines.append(f"Your desk: {base_url}desk")
    msg.set_content("\n".join(lines))
    msg.add_alternative(f"<html><body><p>New for {html.escape(username)} ({html.escape(day)}):</p>"
                        f"<ol>{''.join(items)}</ol><p><a href=\"{html.escape(base_url)}desk\">Your desk</a></p>"
                        "</body></html>", subtype="html")
    return msg


def send_digests(
    store: Store, *, base_url: str, username: str | None = None, since: str | None = None,
    limit: int = 20, dry_run: bool = False,
) -> list[dict[str, Any]]:
    """One e-mail per user who asked for the digest (or only `username`): their
    recommendations of the newest day (or since `since`) not shown to them before, which
    are then marked shown. A user with nothing new gets no mail."""
    from paperdesk import settings
    from paperdesk.desk.recommend import recommend

    users = store.desk.users_with_digest()
    if username is not None:
        users = [u for u in users if u.username == username]
        if not users:
            raise NotFoundError(f"no user {username!r} with a digest address (`paperdesk user add --email`)")
    sender = settings.SMTP_FROM.get()
    report: list[dict[str, Any]] = []
    smtp: smtplib.SMTP | None = None
    try:
        for u in users:
            rec = recommend(store, u.username, since=since, limit=limit, new_only=True)
            hits = rec["hits"]
            entry: dict[str, Any] = {"user": u.username, "email": u.email, "hits": len(hits), "sent": False}
            report.append(entry)
            if not hits or dry_run:
                continue
            if smtp is None:
                smtp = smtplib.SMTP(settings.SMTP_HOST.get(), settings.SMTP_PORT.get(), timeout=30)
                if settings.SMTP_STARTTLS.get():
                    smtp.starttls()
                login = settings.SMTP_USER.get()
                if login:
                    smtp.login(login, settings.SMTP_PASSWORD.get() or "")
            smtp.send_message(compose(u.username, str(u.email), sender, base_url, hits, str(rec["until"])))
            store.desk.mark_seen(u.username, [x for h in hits for x in (h["work_id"], *h["keys"])], now())
            entry["sent"] = True
    except (OSError, smtplib.SMTPException) as exc:
        raise PaperdeskError(f"could not send the digest through SMTP: {exc}") from None
    finally:
        if smtp is not None:
            try:
                smtp.quit()
            except (OSError, smtplib.SMTPException):
                pass
    return report
