"""E-mail through the organizer's SMTP server: the `notify:` block of the `portal:` section, and delivery with the
standard library's `smtplib` (a bounded retry; a failure is a line, never an exception for the caller).

    portal:
      notify:
        smtp: mail.example.org:587          # HOST:PORT (required)
        from: "Portal <portal@example.org>"  # (required)
        organizer: [chairs@example.org]     # who gets the daily digest
        starttls: true                      # STARTTLS before signing in (default false)
        user_env: PORTAL_SMTP_USER          # the environment variables holding the sign-in (never the file)
        password_env: PORTAL_SMTP_PASSWORD
        digest_at: "07:00"                  # the organizer's digest, daily, UTC (quoted: YAML reads 07:00 oddly)
        url: https://portal.example.org     # the portal's address in mails (default: where it listens)

What is mailed, and when, is `harness.portal.notify`'s.
"""

from __future__ import annotations

import os
import re
import smtplib
import ssl
import threading
from dataclasses import dataclass
from datetime import time as clock_time
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from typing import Any

from harness.errors import ConfigError

NOTIFY_FIELDS = ("smtp", "from", "organizer", "starttls", "user_env", "password_env", "digest_at", "url")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HH_MM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
#: seconds between the tries of one mail (three tries in all): a blip is ridden out, an outage is a line
RETRY_DELAYS_S = (1.0, 5.0)
SMTP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class NotifySettings:
    """The `portal.notify` block."""

    host: str
    port: int
    sender: str
    organizer: tuple[str, ...] = ()
    starttls: bool = False
    user_env: str | None = None
    password_env: str | None = None
    digest_at: clock_time = clock_time(7, 0)
    url: str | None = None


@dataclass(frozen=True)
class Mail:
    """One message: its recipients, subject and plain text; `about` names it in lines and the audit log."""

    to: tuple[str, ...]
    subject: str
    text: str
    about: str


def parse_notify(raw: Any, where: str) -> NotifySettings:
    """The `notify:` block at `where` (`FILE: portal.notify`), or a ConfigError of one line naming the field."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a mapping of {', '.join(NOTIFY_FIELDS)}")
    for secret in ("password", "user"):
        if secret in raw:
            raise ConfigError(f"{where}.{secret}: the sign-in is never kept in the file: name the environment "
                              f"variable that holds it ({secret}_env: NAME)")
    unknown = sorted(str(k) for k in raw if k not in NOTIFY_FIELDS)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(NOTIFY_FIELDS)})")
    host, port = _smtp(raw.get("smtp"), f"{where}.smtp")
    sender = _address(raw.get("from"), f"{where}.from", required=True)
    organizer = raw.get("organizer") or []
    if not isinstance(organizer, list):
        raise ConfigError(f"{where}.organizer: a list of e-mail addresses, got {organizer!r}")
    starttls = raw.get("starttls", False)
    if not isinstance(starttls, bool):
        raise ConfigError(f"{where}.starttls: true or false, got {starttls!r}")
    user_env, password_env = (_env(raw.get(k), f"{where}.{k}") for k in ("user_env", "password_env"))
    if (user_env is None) != (password_env is None):
        missing = "password_env" if password_env is None else "user_env"
        raise ConfigError(f"{where}.{missing}: user_env and password_env go together (the SMTP sign-in)")
    url = raw.get("url")
    if url is not None and (not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url)):
        raise ConfigError(f"{where}.url: the portal's address as teams reach it (https://...), got {url!r}")
    return NotifySettings(host, port, sender, tuple(_address(a, f"{where}.organizer[{i}]", required=True)
                                                    for i, a in enumerate(organizer)),
                          starttls, user_env, password_env, _digest_at(raw.get("digest_at"), f"{where}.digest_at"),
                          url.rstrip("/") if url else None)


def _smtp(value: Any, where: str) -> tuple[str, int]:
    if value is None:
        raise ConfigError(f"{where}: the SMTP server is required (HOST:PORT)")
    host, _, port = str(value).rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not isinstance(value, str) or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{where}: {value!r} is not HOST:PORT (mail.example.org:587)")
    return host, int(port)


def _address(value: Any, where: str, required: bool) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or "@" not in parseaddr(value)[1]:
        raise ConfigError(f"{where}: an e-mail address is required, got {value!r}")
    return value


def _env(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ENV_NAME.match(value):
        raise ConfigError(f"{where}: the name of an environment variable, got {value!r}")
    if value not in os.environ:
        raise ConfigError(f"{where}: the environment variable {value} is not set")
    return value


def _digest_at(value: Any, where: str) -> clock_time:
    if value is None:
        return clock_time(7, 0)
    if isinstance(value, int) and not isinstance(value, bool):  # YAML 1.1 reads 23:59 as 1439 (base 60)
        raise ConfigError(f"{where}: quote the time (digest_at: \"07:00\"): YAML read it as the number {value}")
    found = HH_MM.match(value) if isinstance(value, str) else None
    if found is None:
        raise ConfigError(f"{where}: a time of day in UTC as \"HH:MM\", got {value!r}")
    return clock_time(int(found.group(1)), int(found.group(2)))


def message(settings: NotifySettings, mail: Mail) -> EmailMessage:
    """`mail` as an e-mail from the portal (marked as sent automatically, so no vacation replies come back)."""
    msg = EmailMessage()
    msg["From"] = settings.sender
    msg["To"] = ", ".join(mail.to)
    msg["Subject"] = mail.subject
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = make_msgid(domain=parseaddr(settings.sender)[1].rpartition("@")[2] or None)
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(mail.text)
    return msg


def send(settings: NotifySettings, mail: Mail, timeout_s: float = SMTP_TIMEOUT_S) -> None:
    """Hand `mail` to the SMTP server once (smtplib's and the socket's errors are the caller's)."""
    with smtplib.SMTP(settings.host, settings.port, timeout=timeout_s) as smtp:
        if settings.starttls:
            smtp.starttls(context=ssl.create_default_context())
        if settings.user_env and settings.password_env:
            smtp.login(os.environ.get(settings.user_env, ""), os.environ.get(settings.password_env, ""))
        refused = smtp.send_message(message(settings, mail))
    if refused:
        raise smtplib.SMTPRecipientsRefused(refused)


def deliver(settings: NotifySettings, mail: Mail, stop: threading.Event,
            delays: tuple[float, ...] = RETRY_DELAYS_S) -> str | None:
    """Send `mail`, trying again after each of `delays`; None once sent, else the last error in one line. Waiting
    ends early when `stop` is set (the last error is then the answer)."""
    error = "not tried"
    for attempt in range(len(delays) + 1):
        try:
            send(settings, mail)
            return None
        except (OSError, smtplib.SMTPException) as exc:
            error = one_line(exc)
        if attempt < len(delays) and stop.wait(delays[attempt]):
            break
    return error


def one_line(exc: BaseException) -> str:
    """An SMTP or socket error as one line (`ConnectionRefusedError: [Errno 111] Connection refused`)."""
    text = " ".join(str(exc).split()) or "no detail"
    return f"{type(exc).__name__}: {text}"[:300]
