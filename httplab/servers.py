"""Server ids -> display names, in one place. Extend SERVER_NAMES when a server is added."""
from __future__ import annotations

SERVER_NAMES: dict[str, str] = {
    "evloop": "C (evloop)",
    "go": "Go net/http",
    "nginx": "nginx",
    "h2o": "h2o",
    "floor": "floor",
}

# Short labels for table column headers ("C req/s", "Go req/s").
SHORT_NAMES: dict[str, str] = {
    "evloop": "C",
    "go": "Go",
    "nginx": "nginx",
    "h2o": "h2o",
    "floor": "floor",
}

# Servers that are reference points rather than contestants (DESIGN §6).
REFERENCE_SERVERS: tuple[str, ...] = ("nginx", "h2o", "floor")

# Display order; unknown ids sort after these, alphabetically.
SERVER_ORDER: tuple[str, ...] = ("evloop", "go", "nginx", "h2o", "floor")


def display_name(server: str) -> str:
    """Human name of a server id ("evloop" -> "C (evloop)"); unknown ids are returned as given."""
    return SERVER_NAMES.get(server, server)


def short_name(server: str) -> str:
    """Short label for column headers ("evloop" -> "C")."""
    return SHORT_NAMES.get(server, server)


def sort_servers(servers: list[str] | tuple[str, ...] | set[str]) -> list[str]:
    """Servers in display order."""
    known = {s: i for i, s in enumerate(SERVER_ORDER)}
    return sorted(set(servers), key=lambda s: (known.get(s, len(known)), s))
