"""The demo content that ships with the project (written by the team; see items/demo/README.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .importers import ImportReport, items_import

DEMO_DIR = Path(__file__).resolve().parent / "demo"

# (file, format, set slug, set name); files that are absent are skipped so a partial checkout still starts.
DEMO_SETS: list[tuple[str, str, str, str]] = [
    ("tossups.jsonl", "quizbowl", "demo-tossups", "Demo tossups"),
    ("archaeology.jsonl", "archaeology", "demo-archaeology", "Demo question archaeology"),
    ("ghigliottina.jsonl", "ghigliottina", "demo-ghigliottina", "Demo La Ghigliottina"),
    ("romqa.jsonl", "romqa", "demo-romqa", "Demo multi-answer questions"),
]

# Steps other apps add (in their AppConfig.ready) to run after the files load, e.g. demo campaigns;
# each returns objects with a summary() like ImportReport.
DEMO_HOOKS: list[Callable[[], list]] = []


def demo_load() -> list[ImportReport]:
    """Import every demo file; idempotent, so running it on each start loads the content once."""
    reports = []
    for filename, fmt, slug, name in DEMO_SETS:
        path = DEMO_DIR / filename
        if path.exists():
            reports.append(items_import(fmt=fmt, path=path, set_slug=slug, set_name=name))
    for hook in DEMO_HOOKS:
        reports.extend(hook())
    return reports
