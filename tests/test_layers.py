"""The apps' imports point one way (ARCHITECTURE.md: apps call `irt` and the judge's core, never the
reverse): an app imports only apps of lower layers. Read from the source, so a new upward import fails here
before it becomes a circle to untangle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Lower layers first. `celery` and `settings` are the project's own modules, below every app. `items` (the
# item bank and the one responses table) sits below `agents`: the responses table names its agent lazily
# ("agents.Agent"), and the importers that create agents (caimira, protobowl-log) live in agents, which
# registers them with items (`items/importers/__init__.py`).
LAYERS = [
    {"celery", "settings", "core", "judge"},
    {"items"},
    {"agents"},
    {"play", "annotate"},
    {"research"},
    {"accounts"},
]
LAYER = {app: n for n, apps in enumerate(LAYERS) for app in apps}


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules a file imports; a relative import (`from ..agents import x`) is
    resolved against the file's package, so it cannot slip past the layers."""
    package = path.relative_to(ROOT).parent.parts
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            base = package[: len(package) - (node.level - 1)]
            stems = [node.module] if node.module else [alias.name for alias in node.names]
            names.update(".".join([*base, stem]) for stem in stems)
    return names


def app_edges() -> set[tuple[str, str, str]]:
    edges = set()
    for path in (ROOT / "quizsite").rglob("*.py"):
        parts = path.relative_to(ROOT / "quizsite").parts
        if len(parts) < 2:  # quizsite/urls.py, asgi.py, celery.py: the project, which wires every app
            continue
        app = parts[0]
        for name in imported_modules(path):
            bits = name.split(".")
            if bits[0] == "quizsite" and len(bits) > 1 and bits[1] != app and bits[1] in LAYER:
                edges.add((app, bits[1], str(path.relative_to(ROOT))))
    return edges


def test_every_app_is_in_a_layer():
    apps = {p.name for p in (ROOT / "quizsite").iterdir() if (p / "__init__.py").exists()}
    assert apps - {"settings"} <= set(LAYER), f"apps without a layer: {apps - set(LAYER)}"


def test_apps_import_only_lower_layers():
    upward = sorted(
        f"{where}: {app} imports {target}"
        for app, target, where in app_edges()
        if LAYER[target] >= LAYER[app]
    )
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize("package", ["irt", "quizsite/judge"])
def test_irt_and_the_judge_know_nothing_of_django_or_the_apps(package):
    for path in (ROOT / package).rglob("*.py"):
        bad = {
            n
            for n in imported_modules(path)
            if n.split(".")[0] == "django"
            or (n.split(".")[0] == "quizsite" and not n.startswith("quizsite.judge"))
        }
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
