"""Importers for each DATA.md format. Each parses the whole file first, then writes in one transaction,
so a broken file imports nothing and the error names the file and line.

Why a registry: the formats that bring agents as well as items and responses (caimira, protobowl-log)
create agents, and agents sit a layer above items (agents read items; items never import agents). Their
importers live in the agents app (`agents/importers/`), which registers them here when it starts
(`agents/apps.py`); `import_items --format` and `items_import` find every format in `IMPORTERS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .archaeology import import_archaeology
from .base import ImportError_, ImportReport
from .ghigliottina import import_ghigliottina
from .quizbowl import import_quizbowl
from .romqa import import_romqa

Importer = Callable[..., ImportReport]

IMPORTERS: dict[str, Importer] = {
    "quizbowl": import_quizbowl,
    "ghigliottina": import_ghigliottina,
    "archaeology": import_archaeology,
    "romqa": import_romqa,
}


def importer_register(fmt: str, importer: Importer) -> None:
    """Add a format whose importer lives in an app above items (called from that app's `ready()`).

    Registering the same importer again changes nothing (`ready()` may run more than once, as in tests);
    another importer under a taken name is a ValueError, so two apps cannot swap a format unnoticed."""
    current = IMPORTERS.get(fmt)
    if current is not None and current is not importer:
        raise ValueError(
            f"import format {fmt!r} is already registered ({current.__module__}.{current.__qualname__}); "
            f"not replacing it with {importer.__module__}.{importer.__qualname__}"
        )
    IMPORTERS[fmt] = importer


_EVERY_FORMAT = frozenset({"path", "set_slug", "set_name"})


def importer_options(fmt: str) -> frozenset[str]:
    """The options a format's importer takes beyond path, set and name (ghigliottina: vectors, split,
    blocklist ...), read from its signature so that an option is declared once, where it is used."""
    parameters = inspect.signature(IMPORTERS[fmt]).parameters.values()
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return frozenset(p.name for p in parameters if p.kind in named) - _EVERY_FORMAT


def formats_taking(option: str) -> list[str]:
    """The registered formats whose importer takes `option`, for an error that says where it belongs."""
    return sorted(fmt for fmt in IMPORTERS if option in importer_options(fmt))


def items_import(*, fmt: str, path: Path, set_slug: str, set_name: str = "", **options: Any) -> ImportReport:
    """Options go to importers that take them (ghigliottina: `vectors`, a word-vector file or source); an
    option the format does not take is an ImportError_ naming the formats that do, not the importer's
    TypeError."""
    try:
        importer = IMPORTERS[fmt]
    except KeyError:
        raise ImportError_(
            str(path), 0,
            f"unknown format {fmt!r}; known: {', '.join(sorted(IMPORTERS))} "
            "(caimira and protobowl-log are registered when Django's apps load)",
        ) from None
    unknown = sorted(set(options) - importer_options(fmt))
    if unknown:
        taking = ", ".join(formats_taking(unknown[0])) or "none"
        raise ImportError_(str(path), 0, f"format {fmt!r} takes no option {unknown[0]!r}; formats that take it: {taking}")
    return importer(path=Path(path), set_slug=set_slug, set_name=set_name, **options)


__all__ = [
    "IMPORTERS", "ImportError_", "ImportReport", "Importer", "formats_taking", "importer_options", "importer_register",
    "items_import",
]
