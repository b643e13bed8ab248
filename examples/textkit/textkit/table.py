"""Aligned plain-text tables."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from textkit._text import display_width, pad


def normalize_rows(rows: Sequence[Sequence[Any]], headers: Sequence[Any] | None = None) -> list[list[str]]:
    """Turn *rows* (and *headers*, first) into a rectangular grid of strings.

    Cells are converted with str(), None becomes an empty cell and short rows
    are padded with empty cells.
    """
    cells = [["" if c is None else str(c) for c in row] for row in rows]
    if headers is not None:
        cells.insert(0, [str(h) for h in headers])
    ncols = max((len(row) for row in cells), default=0)
    for row in cells:
        row.extend([""] * (ncols - len(row)))
    return cells


def column_widths(cells: Sequence[Sequence[str]]) -> list[int]:
    """Display width of the widest cell of each column of a rectangular grid."""
    if not cells:
        return []
    return [max(display_width(row[i]) for row in cells) for i in range(len(cells[0]))]


def check_align(align: str | None, ncols: int) -> str:
    """Return *align* padded with "l" to *ncols* letters; reject unknown letters."""
    align = (align or "").ljust(ncols, "l")
    if set(align) - set("lrc"):
        raise ValueError(f"align must use only 'l', 'r' and 'c', got {align!r}")
    return align


def format_table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[Any] | None = None,
    align: str | None = None,
    sep: str = " | ",
) -> str:
    """Format *rows* as a table with aligned columns.

    Cells are converted with str(), None becomes an empty cell and short rows
    are padded. With *headers*, a rule follows the header line: dashes under
    each column, and *sep* with "|" turned into "+" and spaces into dashes
    between them. *align* holds one letter per column, "l", "r" or "c";
    missing letters mean "l". Trailing spaces are removed from every line.
    Wide East Asian characters count as two columns.
    """
    cells = normalize_rows(rows, headers)
    if not cells:
        return ""
    align = check_align(align, len(cells[0]))
    widths = column_widths(cells)
    lines = [sep.join(pad(c, w, a) for c, w, a in zip(row, widths, align)).rstrip() for row in cells]
    if headers is not None:
        joint = "".join("+" if ch == "|" else "-" for ch in sep)
        lines.insert(1, joint.join("-" * w for w in widths))
    return "\n".join(lines)


def format_records(
    records: Iterable[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    **options: Any,
) -> str:
    """Format a list of dicts as a table whose headers are the keys.

    *columns* chooses and orders the columns; by default every key, in the
    order first seen. Missing keys give empty cells. Other keyword arguments
    go to format_table.
    """
    records = list(records)
    if columns is None:
        seen: dict[str, None] = {}
        for record in records:
            seen.update(dict.fromkeys(record))
        columns = list(seen)
    rows = [[record.get(column) for column in columns] for record in records]
    return format_table(rows, headers=columns, **options)
