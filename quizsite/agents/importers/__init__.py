"""Importers of the DATA.md formats that bring agents as well as items and responses: `caimira` (a CAIMIRA
release: AI systems and published human ids) and `protobowl-log` (the Protobowl buzz log: its players).

They live here because they create agents, and items sits below agents; the agents app registers them in
the items importers' registry when it starts (`apps.py`), so `import_items --format caimira` and
`items_import(fmt="caimira", ...)` work as for every other format. The item and response parts they share
with the other formats come from `quizsite.items.importers`.
"""

from __future__ import annotations

from quizsite.items.importers import Importer

from .caimira import import_caimira
from .protobowl_log import import_protobowl_log

FORMATS: dict[str, Importer] = {
    "caimira": import_caimira,
    "protobowl-log": import_protobowl_log,
}

__all__ = ["FORMATS", "import_caimira", "import_protobowl_log"]
