"""A fit's artifact: the `irt` fit directory and the prepared CAIMIRA files, zipped into the FitRun row.

Kept in the database rather than on a disk so that a fit made by a Celery worker on one machine can be
read by a web process on another. Loaded fits are cached per process (they never change once stored).
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import irt

FIT_DIR = "fit"
DATA_DIR = "data"


def artifact_pack(*, fit_dir: Path, queries: list[dict], agents: list[dict], responses: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(fit_dir.iterdir()):
            zf.write(path, f"{FIT_DIR}/{path.name}")
        for name, records in (("queries", queries), ("agents", agents), ("responses", responses)):
            zf.writestr(f"{DATA_DIR}/{name}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return buffer.getvalue()


def _artifact_bytes(fit_id: int) -> bytes:
    from .models import FitRun

    blob = FitRun.objects.filter(pk=fit_id).values_list("artifact", flat=True).first()
    if not blob:
        raise LookupError(f"fit {fit_id} has no stored model (it did not succeed)")
    return bytes(blob)


@lru_cache(maxsize=4)
def fit_result_load(fit_id: int) -> irt.FitResult:
    """The fitted `irt` model of a succeeded run (for predictions, cold start included)."""
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(io.BytesIO(_artifact_bytes(fit_id))) as zf:
        zf.extractall(tmp, members=[n for n in zf.namelist() if n.startswith(f"{FIT_DIR}/")])
        return irt.load_fit(Path(tmp) / FIT_DIR)


@lru_cache(maxsize=4)
def fit_data_load(fit_id: int) -> dict[str, list[dict[str, Any]]]:
    """The prepared CAIMIRA records a run was fitted on: {"queries", "agents", "responses"}."""
    out: dict[str, list[dict[str, Any]]] = {}
    with zipfile.ZipFile(io.BytesIO(_artifact_bytes(fit_id))) as zf:
        for name in ("queries", "agents", "responses"):
            text = zf.read(f"{DATA_DIR}/{name}.jsonl").decode()
            out[name] = [json.loads(line) for line in text.splitlines() if line]
    return out


def artifact_extract(*, fit_id: int, directory: Path) -> Path:
    """Unpack a run's artifact (fit/ and data/) into a directory, e.g. for `python -m irt predict`."""
    with zipfile.ZipFile(io.BytesIO(_artifact_bytes(fit_id))) as zf:
        zf.extractall(directory)
    return directory
