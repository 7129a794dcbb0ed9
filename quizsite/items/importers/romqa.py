"""`romqa` format, closed setting (DATA.md): a question, its candidate entities, which of them answer it,
and the cluster of related questions it belongs to (robust scores take the worst case over a cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quizsite.items.models import Item

from .base import (
    ImportError_,
    ImportReport,
    check_unique_ids,
    id_field,
    read_records,
    text_field,
    what,
)
from .limits import MAX_ANSWER_CHARS
from .writing import items_write


def _candidates(path: Path, lineno: int, raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise ImportError_(str(path), lineno, "'candidates' must be a non-empty list")
    out = []
    seen: set[str] = set()
    for i, cand in enumerate(raw, start=1):
        if not isinstance(cand, dict):
            raise ImportError_(str(path), lineno, f"candidate {i} must be an object, got {what(cand)}")
        text = text_field(path, lineno, cand, "text", max_chars=MAX_ANSWER_CHARS, label=f"candidate {i} text").strip()
        flag = cand.get("is_answer")
        if flag not in (True, False, 0, 1) or isinstance(flag, float):
            raise ImportError_(str(path), lineno, f"candidate {i}: 'is_answer' must be true or false")
        if text in seen:
            raise ImportError_(str(path), lineno, f"candidate {i}: {text!r} appears twice")
        seen.add(text)
        entry: dict[str, Any] = {"text": text, "is_answer": bool(flag)}
        uri = text_field(path, lineno, cand, "uri", required=False, label=f"candidate {i} uri")
        if uri:
            entry["uri"] = uri
        out.append(entry)
    return out


def import_romqa(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    path = Path(path)
    rows = []
    ids = []
    for lineno, obj in read_records(path):
        ext_id = id_field(path, lineno, obj, "id")
        cluster_id = id_field(path, lineno, obj, "cluster_id")
        question = text_field(path, lineno, obj, "question").strip()
        if obj.get("candidates") is None:
            raise ImportError_(str(path), lineno, "missing field 'candidates'")
        candidates = _candidates(path, lineno, obj["candidates"])
        data: dict[str, Any] = {"cluster_id": cluster_id, "candidates": candidates}
        for key in ("complete_answer", "constraints"):  # free-form; read_records has checked they are sane JSON
            if obj.get(key) is not None:
                data[key] = obj[key]
        answers = [c["text"] for c in candidates if c["is_answer"]]
        ids.append((lineno, ext_id))
        rows.append((ext_id, {"text": question, "answer": " / ".join(answers), "data": data}))
    check_unique_ids(path, ids)
    return items_write(set_slug=set_slug, set_name=set_name, source=path.name, kind=Item.Kind.ROMQA, rows=rows)
