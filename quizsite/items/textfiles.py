"""Reading the files users hand the importers, with errors that name the file and line.

Apart from the importers (`importers/base.py`, which re-exports all of this) so that the readers of their
auxiliary files, word vectors (`vectors.py`) and blocklists (`blocklist.py`), report the same way: both are
imported by the importers package and work without Django, so they cannot import it. Standard library only.
"""

from __future__ import annotations

import codecs
from pathlib import Path


class ImportError_(ValueError):
    """A bad input file: `path:line: message`. Line 0 means the file as a whole.

    A ValueError, so that the vector and blocklist readers, documented to raise ValueError for a bad
    source, can raise it with the file and line of their own file."""

    def __init__(self, path: str, line: int, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or an ImportError_ for a missing, unreadable or non-regular file."""
    if not path.exists():
        raise ImportError_(str(path), 0, "file not found")
    if not path.is_file():
        raise ImportError_(str(path), 0, "not a file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImportError_(str(path), 0, f"cannot read: {exc.strerror or exc}") from None


def decode_utf8(path: Path, data: bytes) -> str:
    """UTF-8 text (a leading byte-order mark is dropped); bad bytes are refused with their line."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportError_(str(path), line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})") from None


def read_text(path: Path) -> str:
    return decode_utf8(path, read_bytes(path))
