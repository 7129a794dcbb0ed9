"""What the built-in guessers and retrievers learn from: the item bank's tossups, or a collection file.

A document is a title (for a tossup: the main answer of its answer line, as quizsite/judge parses it)
and a text. `exclusions` is what keeps an agent from having seen the question it answers: the answered
tossup's own document, and any document with the same text (the same tossup imported into two sets).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from quizsite.items.models import Item
from quizsite.judge.answerline import parse_answerline
from quizsite.judge.normalize import normalize

MAX_COLLECTION_DOCS = 2_000_000


@dataclass(frozen=True)
class Doc:
    title: str
    text: str
    item_id: int | None = None  # the tossup it comes from, for the bank


def main_answer(answer_line: str) -> str:
    """The answer a tossup's line asks for first: its required (underlined / braced) entry, else its first."""
    try:
        line = parse_answerline(answer_line)
    except Exception:  # an unparsable line still has a readable answer
        return answer_line.strip()[:200]
    entries = [e for e in line.accepts if e.explicit] or list(line.accepts)
    return entries[0].text if entries else answer_line.strip()[:200]


def tossup_text(item: Item) -> str:
    return " ".join(item.data.get("words") or []) or item.text


def bank_docs(set_slugs: Sequence[str] = ()) -> list[Doc]:
    """Every tossup of the item bank (or of the named sets) as a document titled by its main answer."""
    qs = Item.objects.filter(kind=Item.Kind.TOSSUP).order_by("id")
    if set_slugs:
        qs = qs.filter(item_set__slug__in=list(set_slugs))
    return [Doc(main_answer(i.answer), tossup_text(i), i.pk) for i in qs.only("id", "answer", "text", "data")]


def collection_docs(path: str) -> list[Doc]:
    """A collection file the user names: JSON lines {"title", "text"}; a bad line is an error that names it."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"collection {path!r} is not a file")
    docs = []
    with p.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if (
                not isinstance(obj, dict)
                or not isinstance(obj.get("title"), str)
                or not isinstance(obj.get("text"), str)
            ):
                raise ValueError(f'{path}:{lineno}: expected {{"title": str, "text": str}}')
            docs.append(Doc(obj["title"], obj["text"]))
            if len(docs) > MAX_COLLECTION_DOCS:
                raise ValueError(f"{path}: more than {MAX_COLLECTION_DOCS} documents")
    if not docs:
        raise ValueError(f"collection {path!r} is empty")
    return docs


def class_key(title: str) -> str:
    """Titles that name the same answer ("Moby-Dick", "moby dick") share a key."""
    return " ".join(normalize(title)) or title.strip().lower()


def _flat(text: str) -> str:
    return " " + " ".join(normalize(text)) + " "


def exclusions(docs: Sequence[Doc], items: Sequence[Item]) -> dict[int, list[int]]:
    """For each item answered, the indices of the documents it must not see: its own, and every document
    with the same answer whose text contains the item's text or is contained in it (a copy in another
    set, the item cut into parts, the full tossup an item is a part of). Only documents with the item's
    answer are compared: another answer's document cannot make the agent right."""
    by_item: dict[int, list[int]] = {}
    by_class: dict[str, list[int]] = {}
    for n, d in enumerate(docs):
        if d.item_id is not None:
            by_item.setdefault(d.item_id, []).append(n)
        by_class.setdefault(class_key(d.title), []).append(n)
    flat: dict[int, str] = {}
    out = {}
    for item in items:
        own = set(by_item.get(item.pk, ()))
        mine = _flat(tossup_text(item))
        for n in by_class.get(class_key(main_answer(item.answer)), ()):
            if n not in flat:
                flat[n] = _flat(docs[n].text)
            if flat[n] in mine or mine in flat[n]:
                own.add(n)
        out[item.pk] = sorted(own)
    return out


@lru_cache(maxsize=2)
def encoder(model: str):
    """A sentence-transformers encoder, loaded offline once per process (irt's loader)."""
    from irt.embed import load_encoder

    return load_encoder(model)


_EMBEDDED: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
EMBED_CACHE_ROWS = (
    50_000  # about 75 MB of 384-d rows: the bank and its prefixes, shared by the embedding kinds
)


def embed(model: str, texts: Sequence[str]) -> np.ndarray:
    """L2-normalised embeddings, one row per text. Rows are kept in memory (least recently used out), so a
    second embedding kind, or a rerun in the same worker, does not embed the same bank again."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    missing = list(dict.fromkeys(t for t in texts if (model, t) not in _EMBEDDED))
    if missing:
        x = np.asarray(encoder(model)(missing), dtype=np.float32)
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        for t, row in zip(missing, x, strict=True):
            _EMBEDDED[(model, t)] = row
    rows = []
    for t in texts:
        _EMBEDDED.move_to_end((model, t))
        rows.append(_EMBEDDED[(model, t)])
    while len(_EMBEDDED) > EMBED_CACHE_ROWS:
        _EMBEDDED.popitem(last=False)
    return np.stack(rows)
