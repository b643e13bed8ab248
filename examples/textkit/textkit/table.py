"""Aligned plain-text tables."""

from __future__ import annotations

from typing import Any, Sequence


def _pad(text: str, width: int, how: str) -> str:
    """Pad *text* to *width*: "l" left-aligns, "r" right-aligns, "c" centres."""
    if how == "r":
        return text.rjust(width)
    if how == "c":
        return text.center(width)
    return text.ljust(width)


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
    """
    cells = [["" if c is None else str(c) for c in row] for row in rows]
    if headers is not None:
        cells.insert(0, [str(h) for h in headers])
    if not cells:
        return ""
    ncols = max(len(row) for row in cells)
    for row in cells:
        row.extend([""] * (ncols - len(row)))
    align = (align or "").ljust(ncols, "l")
    if set(align) - set("lrc"):
        raise ValueError(f"align must use only 'l', 'r' and 'c', got {align!r}")
    widths = [max(len(row[i]) for row in cells) for i in range(ncols)]
    lines = [sep.join(_pad(c, w, a) for c, w, a in zip(row, widths, align)).rstrip() for row in cells]
    if headers is not None:
        joint = "".join("+" if ch == "|" else "-" for ch in sep)
        lines.insert(1, joint.join("-" * w for w in widths))
    return "\n".join(lines)
