"""An answer line as safe HTML for players: the required part bold and underlined, the rest as text.

Built from the same markup scan the judge reads (:func:`answerline._scan_markup`), so what the room
shows as required is what the judge requires: ``<b><u>``, ``{braces}`` and ``**``/``__`` all come out
the same way, and a line with no marked part shows as plain text. Every character is escaped and no
tag of the source survives: the only tags in the result are the ``<b>``/``<u>`` this module writes.
Directives (``[accept …; prompt on …]``) stay as text, brackets included.
"""

from __future__ import annotations

import html
from functools import lru_cache

from .answerline import BOLD, MAX_LINE_CHARS, UNDER, _scan_markup


def _required_mark(text: str, flags: list[int]) -> int:
    # The parser's rule (parse_answerline): underline marks the required part; bold does when the
    # line has no underline and is not bold throughout.
    alnum = [f for ch, f in zip(text, flags, strict=False) if ch.isalnum()]
    if any(f & UNDER for f in alnum):
        return UNDER
    if any(f & BOLD for f in alnum) and not all(f & BOLD for f in alnum):
        return BOLD
    return 0


@lru_cache(maxsize=2048)
def answerline_html(raw: str) -> str:
    """Escaped HTML of an answer line in any of its forms (HTML, Protobowl braces, plain)."""
    text, flags = _scan_markup((raw or "")[:MAX_LINE_CHARS])
    mark = _required_mark(text, flags)
    out: list[str] = []
    run_start, run_kind = 0, -1

    def kind_of(f: int) -> int:
        if mark and f & mark:
            return 2  # required
        return 1 if f & BOLD else 0

    def close(end: int) -> None:
        chunk = html.escape(text[run_start:end], quote=True)
        if run_kind == 2:
            out.append(f"<b><u>{chunk}</u></b>")
        elif run_kind == 1:
            out.append(f"<b>{chunk}</b>")
        else:
            out.append(chunk)

    for i, f in enumerate(flags):
        k = kind_of(f)
        if k != run_kind:
            if run_kind != -1 and i > run_start:
                close(i)
            run_start, run_kind = i, k
    if run_kind != -1:
        close(len(text))
    return " ".join("".join(out).split())
