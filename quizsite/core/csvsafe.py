"""Cells for CSV files that people open in a spreadsheet (OWASP "CSV injection").

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and, in some, a tab or carriage return
followed by one) as a formula: an answer a player typed as `=HYPERLINK("http://x","click")` would become a
live link in a researcher's sheet, and worse formulas can reach other files or programs. So every CSV
writer of the project passes each cell through `csv_cell`, which puts a single quote before such text;
a spreadsheet shows the quote-prefixed text as text.

Only text is touched, and only in CSV. Numbers (a negative score of -5 stored as a number) stay numbers;
JSON lines and Parquet carry the exact text, and the responses table always keeps exactly what was typed.
"""

from __future__ import annotations

from typing import TypeVar

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

Cell = TypeVar("Cell")


def csv_cell(value: Cell) -> Cell | str:
    """The value to write in a CSV cell: text that a spreadsheet would run gets a leading `'`; the rest as is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
