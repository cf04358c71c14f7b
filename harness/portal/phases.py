"""The campaign's phases and limits: the `portal:` section of the task config (read here only; the stages below
ignore it).

    portal:
      runs_per_team: 2                      # a team's runs at once across phases (the queue's fairness cap)
      max_upload_mb: 2048
      upload_expires_h: 24
      phases:
        - name: dev
          datasets: [dev]
          opens: 2026-11-01T00:00:00Z       # UTC
          closes: 2026-12-15T23:59:59Z
          results: team                     # team | public | hidden (nobody until the reveal)
          limits: {per_day: 5, total: 50, at_once: 2, failures: 10}
      notify: {smtp: HOST:PORT, from: ADDRESS}  # optional: e-mail to teams and the organizer (harness.portal.mail)
      registry: registry.example.org        # optional: the organizer's registry, as teams' engines reach it: teams
                                            # hand in images pushed there, pinned by digest (harness.portal.pinned)
      registry_url: http://127.0.0.1:5000   # optional: how the portal reaches its API (default https://REGISTRY;
                                            # http:// for a loopback address, as Docker does)
      max_image_gb: 20                      # optional: the largest image `harness submit` pushes (uncompressed)

`per_day` and `total` count a team's submissions that did not fail through the organizer's fault and were not
cancelled; `failures` caps those that failed through the team's own fault (a separate, visible counter). A day is
a UTC day: counters reset at 00:00 UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.portal.mail import NotifySettings, parse_notify
from harness.yamlio import parse_yaml, read_text

VISIBILITY = ("team", "public", "hidden")
_PORTAL_FIELDS = {"runs_per_team", "max_upload_mb", "upload_expires_h", "phases", "notify", "registry", "registry_url",
                  "max_image_gb"}
#: a registry's address as it appears in an image reference: HOST[:PORT]
_REGISTRY = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
                       r"(?::[0-9]{1,5})?$")
_PHASE_FIELDS = {"name", "datasets", "opens", "closes", "results", "limits"}
_LIMIT_FIELDS = ("per_day", "total", "at_once", "failures")


@dataclass(frozen=True)
class PhaseLimits:
    """A phase's limits per team (None: no limit)."""

    per_day: int | None = None
    total: int | None = None
    at_once: int | None = None
    failures: int | None = None


@dataclass(frozen=True)
class Phase:
    """One phase: which datasets a submission is evaluated on, when it is open, who sees its results."""

    name: str
    datasets: tuple[str, ...]
    opens: datetime
    closes: datetime
    results: str = "team"
    limits: PhaseLimits = PhaseLimits()

    def is_open(self, now: datetime) -> bool:
        """Whether submissions are taken at `now` (UTC)."""
        return self.opens <= now < self.closes


@dataclass(frozen=True)
class PortalSettings:
    """The `portal:` section."""

    phases: tuple[Phase, ...]
    runs_per_team: int = 2
    max_upload_bytes: int = 2048 * 1024**2
    upload_expires_s: int = 24 * 3600
    notify: NotifySettings | None = None  # e-mail notifications (harness.portal.mail); None: none are sent
    registry: str | None = None  # the organizer's registry (HOST[:PORT]): teams hand in images pushed there
    registry_url: str | None = None  # how the portal reaches the registry's API (None: from `registry`)
    max_image_bytes: int | None = None  # the largest image `harness submit` pushes (None: no cap)

    def registry_api(self) -> str | None:
        """The registry's API base URL as the portal reaches it: `registry_url`, else http:// for a loopback
        address (Docker itself speaks plain HTTP to those) and https:// for any other."""
        if self.registry is None:
            return None
        if self.registry_url:
            return self.registry_url.rstrip("/")
        host = self.registry.rsplit(":", 1)[0] if self.registry.count(":") == 1 else self.registry
        loopback = host == "localhost" or host.startswith("127.")
        return f"{'http' if loopback else 'https'}://{self.registry}"

    def phase(self, name: str) -> Phase:
        """The phase called `name` (one line naming the known ones otherwise)."""
        for p in self.phases:
            if p.name == name:
                return p
        raise ConfigError(f"no phase {name!r} (phases: {', '.join(p.name for p in self.phases)})")

    def open_phase(self, now: datetime) -> Phase | None:
        """The phase open at `now` (the first of several), or None."""
        return next((p for p in self.phases if p.is_open(now)), None)


def next_reset(now: datetime) -> datetime:
    """When the per-day counters reset next: the next 00:00 UTC."""
    day = now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def load_portal_settings(config_path: Path, datasets: set[str]) -> PortalSettings:
    """The `portal:` section of the task config at `config_path`; `datasets` are the config's dataset names."""
    raw = parse_yaml(read_text(config_path, ConfigError, missing="config file not found"), config_path, ConfigError)
    section = raw.get("portal") if isinstance(raw, dict) else None
    where = f"{config_path}: portal"
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: the task config needs a `portal:` section with its phases for `harness portal`")
    _only(section, _PORTAL_FIELDS, where)
    phases_raw = section.get("phases")
    if not isinstance(phases_raw, list) or not phases_raw:
        raise ConfigError(f"{where}.phases: a list of phases is required")
    phases = tuple(_phase(p, f"{where}.phases[{i}]", datasets) for i, p in enumerate(phases_raw))
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}.phases: phase names must differ ({', '.join(names)})")
    return PortalSettings(
        phases=phases,
        runs_per_team=_count(section, "runs_per_team", where, 2),
        max_upload_bytes=_count(section, "max_upload_mb", where, 2048) * 1024**2,
        upload_expires_s=_count(section, "upload_expires_h", where, 24) * 3600,
        notify=None if section.get("notify") is None else parse_notify(section["notify"], f"{where}.notify"),
        registry=_registry(section, where), registry_url=_registry_url(section, where),
        max_image_bytes=_gigabytes(section, "max_image_gb", where))


def _registry(section: dict, where: str) -> str | None:
    value = section.get("registry")
    if value is None:
        return None
    if not isinstance(value, str) or not _REGISTRY.match(value.strip()) or not ("." in value or ":" in value or
                                                                                value.strip() == "localhost"):
        raise ConfigError(f"{where}.registry: {value!r} is not a registry's address as it appears in an image "
                          f"reference (HOST[:PORT], e.g. registry.example.org or 127.0.0.1:5000)")
    return value.strip()


def _registry_url(section: dict, where: str) -> str | None:
    value = section.get("registry_url")
    if value is None:
        return None
    if section.get("registry") is None:
        raise ConfigError(f"{where}.registry_url: only with registry: (the address teams push to)")
    if not isinstance(value, str) or not re.match(r"^https?://[^/\s]+/?$", value.strip()):
        raise ConfigError(f"{where}.registry_url: {value!r} is not http(s)://HOST[:PORT]")
    return value.strip()


def _gigabytes(section: dict, key: str, where: str) -> int | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"{where}.{key}: a number of gigabytes above 0, got {value!r}")
    return int(value * 1000**3)


def _phase(raw: Any, where: str, datasets: set[str]) -> Phase:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a mapping of {', '.join(sorted(_PHASE_FIELDS))}")
    _only(raw, _PHASE_FIELDS, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.name: a name is required")
    names = raw.get("datasets")
    if not isinstance(names, list) or not names or not all(isinstance(d, str) for d in names):
        raise ConfigError(f"{where}.datasets: a list of dataset names is required")
    for d in names:
        if d not in datasets:
            known = ", ".join(sorted(datasets))
            raise ConfigError(f"{where}.datasets: no track has a dataset {d!r} (datasets: {known})")
    opens, closes = _time(raw, "opens", where), _time(raw, "closes", where)
    if closes <= opens:
        raise ConfigError(f"{where}.closes: must be after opens")
    results = raw.get("results", "team")
    if results not in VISIBILITY:
        raise ConfigError(f"{where}.results: {results!r} is not one of {', '.join(VISIBILITY)}")
    limits_raw = raw.get("limits") or {}
    if not isinstance(limits_raw, dict):
        raise ConfigError(f"{where}.limits: a mapping of {', '.join(_LIMIT_FIELDS)}")
    _only(limits_raw, set(_LIMIT_FIELDS), f"{where}.limits")
    limits = PhaseLimits(**{k: _count(limits_raw, k, f"{where}.limits", None) for k in _LIMIT_FIELDS})
    return Phase(name, tuple(names), opens, closes, results, limits)


def _only(raw: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in raw if k not in allowed)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(sorted(allowed))})")


def _count(raw: dict, key: str, where: str, default: int | None) -> Any:
    value = raw.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}.{key}: a whole number of 0 or more, got {value!r}")
    return value


def _time(raw: dict, key: str, where: str) -> datetime:
    value = raw.get(key)
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp itself
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"{where}.{key}: {value!r} is not an ISO 8601 time (2026-12-01T00:00:00Z)") from None
    else:
        raise ConfigError(f"{where}.{key}: a time in UTC is required (2026-12-01T00:00:00Z)")
    if moment.tzinfo is None or moment.utcoffset() != timedelta(0):
        raise ConfigError(f"{where}.{key}: {value!s} must be in UTC (end it with Z)")
    return moment.astimezone(timezone.utc)
