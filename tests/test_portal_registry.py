"""The portal as the token server of the organizer's Docker registry, without Docker: the libtrust key id, the
signing key made once, scope parsing and access filtering, the JWT, the registry's config; and the token endpoint
of a real `harness portal` on loopback (Basic auth, one-line refusals)."""

from __future__ import annotations

import base64
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from harness.errors import HarnessError
from harness.portal import registry
from harness.portal.registry import Scope, access, granted, key_id, parse_scopes
from harness.yamlio import read_yaml
from tests.portal_support import Campaign, PortalProcess, harness, make_campaign

#: a fixed P-256 key and its libtrust key id, computed apart from the harness with openssl and coreutils:
#: openssl pkey -in K -pubout -outform DER | sha256sum | cut -c1-60 | xxd -r -p | base32 | fold -w4 | paste -sd:
FIXED_KEY = b"""-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1seltGbYHwWG0uSM
rwn2swibaGwbrvlsWV1VpQ4lT3WhRANCAATDPjPEH8LAuHmdpf0OpuWaycLDU8p4
V9O3GnRKoZTAaL0JwJADCopg/RAHklT1e3bAKfTlTp/FTcG1fQAkvwqg
-----END PRIVATE KEY-----
"""
FIXED_KID = "XJEU:I642:4WZZ:ELZG:OP6K:NTMF:Y7A6:VXEY:TWFS:GSB3:57EV:PFGG"


def test_the_key_id_is_libtrusts() -> None:
    key = serialization.load_pem_private_key(FIXED_KEY, password=None)
    assert key_id(key.public_key()) == FIXED_KID


def test_the_signing_key_is_made_once_private_with_its_certificate(tmp_path: Path) -> None:
    first = registry.signing_key(tmp_path)
    key_file = tmp_path / "registry" / "token.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert re.fullmatch(r"[A-Z2-7]{4}(:[A-Z2-7]{4}){11}", first.kid)
    cert = x509.load_pem_x509_certificate(first.certificate.read_bytes())
    assert key_id(cert.public_key()) == first.kid  # the registry finds the key by the certificate's key id
    assert registry.signing_key(tmp_path).kid == first.kid
    first.certificate.unlink()  # a lost certificate is made again, of the same key
    assert registry.signing_key(tmp_path).kid == first.kid and first.certificate.is_file()
    assert [p.name for p in (tmp_path / "registry").iterdir() if p.name.startswith(".")] == []


def test_a_signing_key_others_may_read_is_refused(tmp_path: Path) -> None:
    key = registry.signing_key(tmp_path)
    os.chmod(tmp_path / "registry" / "token.key", 0o644)
    with pytest.raises(HarnessError, match="others may read the registry's signing key"):
        registry.signing_key(tmp_path)
    assert key.kid


def test_scopes_repeat_share_a_parameter_or_are_absent() -> None:
    assert parse_scopes([]) == []  # docker login
    assert parse_scopes(["repository:alpha/asr:push,pull", "repository:alpha/base:pull"]) == [
        Scope("repository", "alpha/asr", ("push", "pull")), Scope("repository", "alpha/base", ("pull",))]
    assert parse_scopes(["repository:a/b:pull registry:catalog:*"]) == [
        Scope("repository", "a/b", ("pull",)), Scope("registry", "catalog", ("*",))]
    assert parse_scopes(["repository(plugin):alpha/p:pull,pull,"]) == [
        Scope("repository(plugin)", "alpha/p", ("pull",))]


@pytest.mark.parametrize("bad", ["repository", "repository:alpha/asr", "repository::pull", ":alpha/x:pull",
                                 "repository:alpha/asr:PUSH"])
def test_a_malformed_scope_is_one_line(bad: str) -> None:
    with pytest.raises(ValueError, match="is not TYPE:NAME:ACTIONS"):
        parse_scopes([bad])


@pytest.mark.parametrize(("owner", "scope", "actions"), [
    ("alpha", "repository:alpha/asr:push,pull", ["push", "pull"]),
    ("alpha", "repository:alpha/deep/name:pull", ["pull"]),
    ("alpha", "repository:alpha/asr:push,pull,delete,*", ["push", "pull"]),
    ("alpha", "repository:beta/asr:push,pull", []),
    ("alpha", "repository:alphabet/asr:push,pull", []),  # a prefix of another team's name is not its namespace
    ("alpha", "repository:alpha:push,pull", []),
    ("alpha", "repository:alpha/:push", []),
    ("alpha", "repository(plugin):alpha/p:pull", []),
    ("alpha", "registry:catalog:*", []),
    ("organizer", "repository:alpha/asr:push,pull", ["pull"]),
    ("organizer", "repository:anything/at/all:pull,delete", ["pull"]),
    ("organizer", "registry:catalog:*", []),
])
def test_a_team_gets_its_own_repositories_and_the_organizer_pulls(owner: str, scope: str,
                                                                   actions: list[str]) -> None:
    assert granted(owner, parse_scopes([scope])[0]) == actions


def test_every_requested_scope_is_in_the_access_claim_even_with_nothing_granted() -> None:
    assert access("alpha", parse_scopes(["repository:alpha/a:push,pull", "repository:beta/a:pull"])) == [
        {"type": "repository", "name": "alpha/a", "actions": ["push", "pull"]},
        {"type": "repository", "name": "beta/a", "actions": []}]


def test_the_token_is_an_es256_jwt_the_certificate_verifies(tmp_path: Path) -> None:
    signing = registry.signing_key(tmp_path)
    answer = registry.issue(signing, "alpha", parse_scopes(["repository:alpha/a:push,pull"]), now=1_900_000_000)
    assert answer["token"] == answer["access_token"]
    assert answer["expires_in"] == 300 and answer["issued_at"] == "2030-03-17T17:46:40Z"
    header = jwt.get_unverified_header(answer["token"])
    assert header["alg"] == "ES256" and header["kid"] == signing.kid
    public = x509.load_pem_x509_certificate(signing.certificate.read_bytes()).public_key()
    claims = jwt.decode(answer["token"], public, algorithms=["ES256"], audience="harness-registry",
                        issuer="harness-portal", options={"verify_exp": False, "verify_nbf": False,
                                                          "verify_iat": False})
    assert claims["sub"] == "alpha" and claims["exp"] - claims["iat"] == 300 and claims["nbf"] == claims["iat"]
    assert claims["access"] == [{"type": "repository", "name": "alpha/a", "actions": ["push", "pull"]}]
    assert len(claims["jti"]) >= 20


def test_the_registry_config_names_the_portal_and_the_certificate(tmp_path: Path) -> None:
    path = registry.registry_config(tmp_path, "https://portal.example.org/", "127.0.0.1:5001",
                                    tmp_path / "images")
    config = read_yaml(path)
    assert config["auth"]["token"] == {
        "realm": "https://portal.example.org/api/v1/registry/token", "service": "harness-registry",
        "issuer": "harness-portal", "rootcertbundle": str(tmp_path / "registry" / "token.crt")}
    assert config["storage"]["filesystem"]["rootdirectory"] == str(tmp_path / "images")
    assert config["http"]["addr"] == "127.0.0.1:5001"
    assert (tmp_path / "registry" / "token.key").is_file()


@pytest.mark.parametrize(("url", "listen", "message"), [
    ("portal.example.org", "127.0.0.1:5000", "is not the portal's http"),
    ("ftp://portal.example.org", "127.0.0.1:5000", "is not the portal's http"),
    ("https://portal.example.org", "5000", "is not HOST:PORT"),
])
def test_a_wrong_registry_config_is_one_line(tmp_path: Path, url: str, listen: str, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        registry.registry_config(tmp_path, url, listen)


def test_without_the_portal_extra_it_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jwt", None)  # as if PyJWT were not installed
    with pytest.raises(HarnessError, match=r"the registry's tokens need jwt: pip install 'harness\[portal\]'"):
        registry.registry_config(tmp_path, "https://portal.example.org", "127.0.0.1:5000")


def test_the_command_writes_the_config_and_says_how_to_start_the_registry(tmp_path: Path) -> None:
    proc = subprocess.run(harness("portal", "registry-config", "--state", str(tmp_path), "--portal-url",
                                  "https://portal.example.org"), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    config = tmp_path / "registry" / "config.yml"
    assert proc.stdout.splitlines() == [
        f"harness portal: wrote the registry's config to {config}",
        f"harness portal: start the registry with `docker-registry serve {config}` (token server: "
        "https://portal.example.org/api/v1/registry/token; `docker login` with the team id and its token)"]
    assert read_yaml(config)["http"]["addr"] == "127.0.0.1:5000"
    missing = subprocess.run(harness("portal", "registry-config", "--state", str(tmp_path)), capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode != 0 and missing.stderr.strip().splitlines()[-1].endswith(
        "registry-config needs --portal-url URL: the portal's address as Docker clients reach it")


# ------------------------------------------------------------------------------ the endpoint of a real portal


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Campaign, PortalProcess, dict[str, str]]]:
    campaign = make_campaign(tmp_path_factory.mktemp("registry-portal"))
    tokens = {owner: campaign.token(owner) for owner in ("alpha", "beta", "organizer")}
    server = PortalProcess(campaign)
    try:
        yield campaign, server, tokens
    finally:
        server.stop()


def _ask(url: str, user: str | None, password: str | None, **params: str | list[str]) -> requests.Response:
    auth = None if user is None else (user, password or "")
    return requests.get(f"{url}/api/v1/registry/token", params=params, auth=auth, timeout=60)


def _one_line(answer: requests.Response) -> str:
    assert answer.text.count("\n") == 1, answer.text
    return str(answer.json()["error"])


@pytest.mark.slow
def test_the_endpoint_grants_a_team_its_own_repositories(portal) -> None:
    campaign, server, tokens = portal
    answer = _ask(server.url, "alpha", tokens["alpha"], service="harness-registry",
                  scope=["repository:alpha/asr:push,pull", "repository:beta/asr:push,pull"])
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"token", "access_token", "expires_in", "issued_at"} and body["expires_in"] == 300
    cert = x509.load_pem_x509_certificate((campaign.state / "registry" / "token.crt").read_bytes())
    claims = jwt.decode(body["token"], cert.public_key(), algorithms=["ES256"], audience="harness-registry",
                        issuer="harness-portal")
    assert claims["sub"] == "alpha" and claims["access"] == [
        {"type": "repository", "name": "alpha/asr", "actions": ["push", "pull"]},
        {"type": "repository", "name": "beta/asr", "actions": []}]
    login = _ask(server.url, "organizer", tokens["organizer"], service="harness-registry", account="organizer")
    assert login.status_code == 200 and jwt.decode(login.json()["token"], cert.public_key(), algorithms=["ES256"],
                                                   audience="harness-registry")["access"] == []


@pytest.mark.slow
def test_the_endpoint_refuses_in_one_line(portal) -> None:
    campaign, server, tokens = portal
    wrong_service = _ask(server.url, "alpha", tokens["alpha"], service="other-registry")
    assert wrong_service.status_code == 400 and "is not this portal's registry" in _one_line(wrong_service)
    bad_scope = _ask(server.url, "alpha", tokens["alpha"], service="harness-registry", scope="repository:x")
    assert bad_scope.status_code == 400 and "is not TYPE:NAME:ACTIONS" in _one_line(bad_scope)
    anonymous = _ask(server.url, None, None, service="harness-registry")
    assert anonymous.status_code == 401 and "needs HTTP Basic" in _one_line(anonymous)
    assert anonymous.headers["WWW-Authenticate"] == 'Basic realm="harness-registry"'
    unknown = _ask(server.url, "alpha", "hpt_not-a-token", service="harness-registry")
    assert unknown.status_code == 401 and _one_line(unknown).startswith("unknown token")
    assert unknown.json()["details"] == unknown.json()["error"]  # what the Docker client prints
    other_user = _ask(server.url, "beta", tokens["alpha"], service="harness-registry")
    assert other_user.status_code == 401 and "is not the token's" in _one_line(other_user)
    garbled = requests.get(f"{server.url}/api/v1/registry/token", params={"service": "harness-registry"},
                           headers={"Authorization": "Basic " + base64.b64encode(b"no-colon").decode()}, timeout=60)
    assert garbled.status_code == 401
    assert requests.post(f"{server.url}/api/v1/registry/token", timeout=60).status_code == 405


@pytest.mark.slow
def test_a_revoked_token_gets_no_registry_token_and_the_guard_counts_failures(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "campaign")
    token = campaign.token("beta")
    campaign.token("beta", "--revoke")
    server = PortalProcess(campaign)
    try:
        revoked = _ask(server.url, "beta", token, service="harness-registry")
        assert revoked.status_code == 401 and _one_line(revoked).startswith("revoked token")
        codes = [_ask(server.url, "beta", f"hpt_wrong{i}", service="harness-registry").status_code
                 for i in range(19)]  # with the revoked one, the 20 failed sign-ins a minute of app.py
        assert codes == [401] * 19
        blocked = _ask(server.url, "beta", token, service="harness-registry")
        assert blocked.status_code == 429 and "too many failed sign-ins" in _one_line(blocked)
    finally:
        server.stop()
