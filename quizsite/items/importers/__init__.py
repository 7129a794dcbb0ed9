"""Importers for each DATA.md format. Each parses the whole file first, then writes in one transaction,
so a broken file imports nothing and the error names the file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .archaeology import import_archaeology
from .base import ImportError_, ImportReport
from .caimira import import_caimira
from .ghigliottina import import_ghigliottina
from .protobowl_log import import_protobowl_log
from .quizbowl import import_quizbowl
from .romqa import import_romqa

IMPORTERS: dict[str, Callable[..., ImportReport]] = {
    "quizbowl": import_quizbowl,
    "ghigliottina": import_ghigliottina,
    "archaeology": import_archaeology,
    "romqa": import_romqa,
    "caimira": import_caimira,
    "protobowl-log": import_protobowl_log,
}


def items_import(*, fmt: str, path: Path, set_slug: str, set_name: str = "", **options: Any) -> ImportReport:
    """Options go to importers that take them (ghigliottina: `vectors`, a word-vector file or source)."""
    try:
        importer = IMPORTERS[fmt]
    except KeyError:
        raise ImportError_(str(path), 0, f"unknown format {fmt!r}; known: {', '.join(sorted(IMPORTERS))}") from None
    return importer(path=Path(path), set_slug=set_slug, set_name=set_name, **options)


__all__ = ["IMPORTERS", "ImportError_", "ImportReport", "items_import"]
