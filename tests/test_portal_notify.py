"""E-mail notifications from the campaign portal (issue 47, item 4), tested against a local SMTP server
(aiosmtpd's `Controller` on loopback, keeping every message it receives in a list)."""

from __future__ import annotations

import smtplib
import socket
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from typing import Any

import pytest
from aiosmtpd.controller import Controller


class Inbox:
    """An aiosmtpd handler that keeps each message it receives (parsed) in a list."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        message = BytesParser(policy=default_policy).parsebytes(envelope.content.replace(b"\r\n", b"\n"))
        assert isinstance(message, EmailMessage)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Poll `condition` until it holds, failing after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture()
def smtp_server() -> Iterator[tuple[Controller, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()


def test_a_local_smtp_server_receives_a_mail(smtp_server: tuple[Controller, Inbox]) -> None:
    controller, inbox = smtp_server
    message = EmailMessage()
    message["From"] = "portal@example.org"
    message["To"] = "team@example.org"
    message["Subject"] = "hello"
    message.set_content("body text\n")
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        client.send_message(message)
    wait_for(lambda: len(inbox.messages) == 1)
    assert inbox.messages[0]["Subject"] == "hello"
    assert inbox.messages[0]["X-Envelope-To"] == "team@example.org"
    assert inbox.messages[0].get_content() == "body text\n"
