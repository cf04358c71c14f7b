"""The portal as the token server of the organizer's own Docker registry (Debian's `docker-registry`, distribution
2.8, `auth: token`).

`docker login REGISTRY -u TEAM` sends the team's portal token as the password; the registry sends the Docker client
to the portal (`GET /api/v1/registry/token`, HTTP Basic), which answers a short-lived ES256 JWT that grants a team
`push` and `pull` on its own repositories (`TEAM/...`) and nothing else, and the organizer `pull` on every
repository. The registry checks the JWT against the self-signed certificate of the portal's signing key, named by
the libtrust key id in the JWT's header (`kid`).

    STATE/registry/token.key    the signing key (EC P-256, PKCS#8 PEM, mode 600), made once
    STATE/registry/token.crt    its self-signed certificate: the registry's `rootcertbundle`
    STATE/registry/config.yml   the registry's config (`harness portal registry-config`)

The endpoint itself is harness.portal.registry_endpoint; the portal's own pull tokens (intake's check that an
image is there, the queue's pulls) are harness.portal.pinned's.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.errors import HarnessError
from harness.jsonio import write_text_atomic
from harness.portal.teams import ORGANIZER

#: the registry's name in its config (`auth.token.service`) and in the JWT's audience
SERVICE = "harness-registry"
#: who signs the tokens (`auth.token.issuer`, the JWT's `iss`)
ISSUER = "harness-portal"
#: the token endpoint, below the portal's address (`auth.token.realm`)
REALM_PATH = "/api/v1/registry/token"
#: how long a registry token lives (the Docker client asks for a new one when it runs out)
TOKEN_TTL_S = 300
FOLDER, KEY, CERT, CONFIG = "registry", "token.key", "token.crt", "config.yml"
#: what a team may do on its own repositories, and the organizer on every one
TEAM_ACTIONS: tuple[str, ...] = ("push", "pull")
ORGANIZER_ACTIONS: tuple[str, ...] = ("pull",)
_SCOPE = re.compile(r"^(?P<type>[a-z0-9]+(?:\([a-z0-9]+\))?):(?P<name>[^\s]+):(?P<actions>[a-z*,]*)$")


def need_crypto() -> None:
    """PyJWT and cryptography (the `portal` extra) are there, or one line saying how to install them."""
    try:
        import cryptography  # noqa: F401
        import jwt  # noqa: F401
    except ImportError as exc:
        raise HarnessError(f"the registry's tokens need {exc.name}: pip install 'harness[portal]'") from None


def key_id(public_key: Any) -> str:
    """The libtrust key id of `public_key` (what docker-registry looks a JWT's `kid` up by): the SHA-256 of its DER
    SubjectPublicKeyInfo, the first 30 bytes, base32 without padding, in groups of four joined by `:`."""
    from cryptography.hazmat.primitives import serialization

    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    text = base64.b32encode(hashlib.sha256(der).digest()[:30]).decode("ascii").rstrip("=")
    return ":".join(text[i:i + 4] for i in range(0, len(text), 4))


@dataclass(frozen=True)
class SigningKey:
    """The portal's registry signing key, its libtrust key id and where its certificate is."""

    key: Any  # cryptography's EllipticCurvePrivateKey
    kid: str
    certificate: Path


def signing_key(state: Path) -> SigningKey:
    """The signing key of STATE/registry/, made once (mode 600), and its self-signed certificate (made again from
    the key when it is missing or belongs to another key). Two processes making it at once agree on one key."""
    need_crypto()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    folder = state / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    key_path, cert_path = folder / KEY, folder / CERT
    if not key_path.is_file():
        pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".token-key-")  # mode 600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
            os.link(tmp, key_path)  # never over a key another process made meanwhile
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    if key_path.stat().st_mode & 0o077:
        raise HarnessError(f"{key_path}: others may read the registry's signing key: `chmod 600 {key_path}`")
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise HarnessError(f"{key_path}: not an EC private key (remove it: the portal makes a new one)")
    if not _certifies(cert_path, key):
        write_text_atomic(cert_path, _self_signed(key))
    return SigningKey(key, key_id(key.public_key()), cert_path)


def _certifies(cert_path: Path, key: Any) -> bool:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except (OSError, ValueError):
        return False
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return bool(cert.public_key().public_bytes(*spki) == key.public_key().public_bytes(*spki))


def _self_signed(key: Any) -> str:
    """A self-signed certificate of `key` (PEM), valid for ten years: docker-registry trusts its public key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{ISSUER} registry token signer")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode("ascii")


# ------------------------------------------------------------------------------------------ scopes and access


@dataclass(frozen=True)
class Scope:
    """One requested scope, `TYPE:NAME:ACTIONS` (`repository:alpha/asr:push,pull`)."""

    type: str
    name: str
    actions: tuple[str, ...]


def parse_scopes(values: list[str]) -> list[Scope]:
    """The scopes of the `scope` parameters (each may hold several, separated by spaces); a malformed one is a
    one-line ValueError."""
    scopes = []
    for value in values:
        for item in value.split():
            found = _SCOPE.match(item)
            if found is None:
                raise ValueError(f"scope {item[:200]!r} is not TYPE:NAME:ACTIONS (repository:TEAM/NAME:push,pull)")
            actions = tuple(dict.fromkeys(a for a in found["actions"].split(",") if a))
            scopes.append(Scope(found["type"], found["name"], actions))
    return scopes


def granted(owner: str, scope: Scope) -> list[str]:
    """The actions of `scope` that `owner` gets: a team `push`/`pull` on `TEAM/...`, the organizer `pull` on every
    repository; anything else none (the registry then answers `denied`)."""
    if scope.type != "repository":
        return []
    if owner == ORGANIZER:
        allowed = ORGANIZER_ACTIONS
    elif scope.name.startswith(f"{owner}/") and len(scope.name) > len(owner) + 1:
        allowed = TEAM_ACTIONS
    else:
        return []
    return [a for a in scope.actions if a in allowed]


def access(owner: str, scopes: list[Scope]) -> list[dict[str, Any]]:
    """The JWT's `access` claim: each requested scope with the actions granted (possibly none)."""
    return [{"type": s.type, "name": s.name, "actions": granted(owner, s)} for s in scopes]


def issue(signing: SigningKey, owner: str, scopes: list[Scope], now: float | None = None,
          ttl_s: int = TOKEN_TTL_S) -> dict[str, Any]:
    """The token endpoint's answer for `owner`: the JWT twice (`token`, `access_token`), its lifetime and time.
    (`ttl_s`: the portal's own pull tokens for an evaluation live longer: harness.portal.pinned.)"""
    import jwt

    at = int(time.time() if now is None else now)
    claims = {"iss": ISSUER, "sub": owner, "aud": SERVICE, "exp": at + ttl_s, "nbf": at, "iat": at,
              "jti": secrets.token_urlsafe(18), "access": access(owner, scopes)}
    token = jwt.encode(claims, signing.key, algorithm="ES256", headers={"kid": signing.kid, "typ": "JWT"})
    issued = dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"token": token, "access_token": token, "expires_in": ttl_s, "issued_at": issued}


# ------------------------------------------------------------------------------------------- the registry's config


def registry_config(state: Path, portal_url: str, listen: str, storage: Path | None = None) -> Path:
    """Write STATE/registry/config.yml, docker-registry's config: token authentication against the portal at
    `portal_url` (its address as the Docker clients reach it), images under `storage` (default
    STATE/registry/storage), listening on `listen` (HOST:PORT). Makes the signing key when there is none."""
    import yaml

    url = urlsplit(portal_url)
    if url.scheme not in ("http", "https") or not url.netloc or url.query or url.fragment:
        raise HarnessError(f"--portal-url: {portal_url!r} is not the portal's http(s):// address")
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise HarnessError(f"--listen: {listen!r} is not HOST:PORT")
    signing = signing_key(state)
    storage = (storage or state / FOLDER / "storage").resolve()
    config = {
        "version": 0.1,
        "log": {"level": "info"},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": False}},
        "http": {"addr": listen, "headers": {"X-Content-Type-Options": ["nosniff"]}},
        "auth": {"token": {"realm": portal_url.rstrip("/") + REALM_PATH, "service": SERVICE, "issuer": ISSUER,
                           "rootcertbundle": str(signing.certificate.resolve())}},
    }
    text = ("# docker-registry's config, written by `harness portal registry-config`: "
            "`docker-registry serve THIS_FILE`\n" + yaml.safe_dump(config, sort_keys=False))
    return write_text_atomic(state / FOLDER / CONFIG, text)
