"""pyproject.toml's dependency floors are the versions environment.yml pins (the versions every
test runs against), and the installed packages satisfy them."""
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s*-\s*([A-Za-z0-9_.-]+)=([0-9][^\s#]*)", line)
        if m and m.group(1) != "python":
            pins[m.group(1).lower()] = m.group(2)
    return pins


def _floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for group in project["optional-dependencies"].values() for r in group]
    floors = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9.]*)", r.strip())
        assert m, f"pyproject.toml: {r!r} is not of the form name>=version"
        floors[m.group(1).lower()] = m.group(2)
    return floors


def _tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def test_every_floor_is_the_pinned_version():
    pins, floors = _pins(), _floors()
    for name, floor in floors.items():
        assert name in pins, f"{name} has a floor in pyproject.toml but no pin in environment.yml"
        assert floor == pins[name], f"{name}: floor {floor} != pin {pins[name]}"


def test_installed_versions_meet_the_floors():
    for name, floor in _floors().items():
        assert _tuple(version(name)) >= _tuple(floor), f"{name} {version(name)} < {floor}"
