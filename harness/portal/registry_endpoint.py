"""The registry's token endpoint, `GET /api/v1/registry/token`: the organizer's Docker registry sends each Docker
client here (HTTP Basic: the team id, or `organizer`, and its portal token) for a short-lived JWT signed with the
portal's key (harness.portal.registry, which signs; this module answers)."""

from __future__ import annotations

import base64
import binascii
import json
import threading
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.portal.app import ApiError, Base, Portal, sign_in
from harness.portal.registry import REALM_PATH, SERVICE, SigningKey, issue, parse_scopes, signing_key
from harness.portal.teams import ORGANIZER


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """The user name and password of an `Authorization: Basic ...` header, or None."""
    scheme, _, value = (header or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, colon, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if colon and password else None


class RegistryTokenHandler(Base):
    """`GET /api/v1/registry/token?service=harness-registry&scope=repository:TEAM/NAME:push,pull` with HTTP Basic
    (the team id, or `organizer`, and its portal token). No cookie, so no XSRF token."""

    def initialize(self, portal: Portal, keys: _Keys) -> None:  # type: ignore[override]
        super().initialize(portal)
        self.keys = keys

    def check_xsrf_cookie(self) -> None:
        return None

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """One line, with the Docker client's `details` too, so `docker login` prints the reason."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = " ".join(str(exc.message if isinstance(exc, ApiError) else self._reason).split())
        if status_code == 401:
            self.set_header("WWW-Authenticate", f'Basic realm="{SERVICE}"')
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": message, "details": message}) + "\n")

    def get(self) -> None:
        service = self.get_query_argument("service", None)
        if service != SERVICE:
            raise ApiError(400, f"service {str(service)[:80]!r} is not this portal's registry: {SERVICE!r}")
        try:
            scopes = parse_scopes(self.get_query_arguments("scope"))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        credentials = basic_credentials(self.request.headers.get("Authorization"))
        owner = sign_in(self.portal, self.request.remote_ip or "?", credentials[1] if credentials else None,
                        "this needs HTTP Basic: `docker login REGISTRY -u TEAM` with the team's portal token "
                        "as the password")
        if credentials is not None and credentials[0] != owner:
            raise ApiError(401, f"user name {credentials[0][:80]!r} is not the token's: log in with your team id "
                                f"(the organizer: {ORGANIZER!r})")
        self.json(issue(self.keys.get(), owner, scopes))


class _Keys:
    """The signing key, loaded (or made) on first use and kept."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._key: SigningKey | None = None

    def get(self) -> SigningKey:
        with self._lock:
            if self._key is None:
                try:
                    self._key = signing_key(self.state)
                except HarnessError as exc:
                    raise ApiError(503, str(exc)) from None
            return self._key


def routes(portal: Portal) -> list[Any]:
    """The registry's token endpoint, for `make_app`."""
    return [(REALM_PATH, RegistryTokenHandler, {"portal": portal, "keys": _Keys(portal.campaign.state)})]
