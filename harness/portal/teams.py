"""`teams.yaml`: the campaign's teams, each with an id, a name and contacts. One-line errors name the file and field.

    teams:
      - {id: alpha, name: "Alpha Lab", contacts: [alpha@example.org]}
      - {id: organizers, name: "Baselines", baseline: true}   # its submissions are the campaign's baselines
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.yamlio import parse_yaml, read_text

TEAM_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
#: the organizer's own identity (never a team's id)
ORGANIZER = "organizer"


@dataclass(frozen=True)
class Team:
    """One team of the campaign."""

    id: str
    name: str
    contacts: tuple[str, ...] = ()
    baseline: bool = False  # the organizer's own team: its submissions are marked as baselines


def load_teams(path: Path) -> tuple[Team, ...]:
    """The teams of `path`, checked: ids unique, lowercase, not the organizer's."""
    raw = parse_yaml(read_text(path, ConfigError, missing="teams file not found"), path, ConfigError)
    items = raw.get("teams") if isinstance(raw, dict) else None
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{path}: teams: a list of teams is required ({{id, name, contacts}})")
    teams: list[Team] = []
    for i, item in enumerate(items):
        where = f"{path}: teams[{i}]"
        if not isinstance(item, dict) or set(item) - {"id", "name", "contacts", "baseline"}:
            raise ConfigError(f"{where}: a mapping of id, name, contacts and baseline")
        if not isinstance(item.get("baseline", False), bool):
            raise ConfigError(f"{where}.baseline: true or false")
        team_id, contacts = item.get("id"), item.get("contacts") or []
        if not isinstance(team_id, str) or not TEAM_ID.match(team_id) or team_id == ORGANIZER:
            raise ConfigError(f"{where}.id: {team_id!r} is not a team id (lowercase letters, digits, - and _; "
                              f"not {ORGANIZER!r})")
        if any(t.id == team_id for t in teams):
            raise ConfigError(f"{where}.id: duplicate team id {team_id!r}")
        if not isinstance(contacts, list) or not all(isinstance(c, str) for c in contacts):
            raise ConfigError(f"{where}.contacts: a list of e-mail addresses")
        teams.append(Team(team_id, str(item.get("name") or team_id), tuple(contacts), bool(item.get("baseline"))))
    return tuple(teams)
