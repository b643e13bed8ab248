"""Writing Markdown: tables, lists, headings, quotes and links."""

from __future__ import annotations

import re
from typing import Any, Sequence

from textkit._text import pad
from textkit.table import check_align, column_widths, normalize_rows
from textkit.wrap import fill, wrap

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|!])")


def escape(text):
    return _SPECIAL.sub(r"\\\1", text)


def heading(text: str, level: int = 1) -> str:
    """An ATX heading: ``heading("Usage", 2)`` is ``"## Usage"``."""
    if not 1 <= level <= 6:
        raise ValueError(f"level must be between 1 and 6, got {level}")
    return f"{'#' * level} {' '.join(text.split())}"


def link(text: str, url: str, title: str | None = None) -> str:
    """An inline link; brackets in *text* and spaces in *url* are escaped."""
    label = text.replace("[", r"\[").replace("]", r"\]")
    target = url.replace(" ", "%20").replace(")", "%29")
    if title:
        return f'[{label}]({target} "{title}")'
    return f"[{label}]({target})"


def bullet_list(items: Sequence[Any], ordered: bool = False, start: int = 1, indent: int = 2) -> str:
    """A Markdown list; a list or tuple among *items* nests under the item before it.

    Ordered lists count from *start*; nested lists are indented by *indent*
    spaces per level (more for ordered items, to line up with their text).
    """
    lines: list[str] = []

    def emit(entries: Sequence[Any], depth: int, margin: int) -> None:
        number = start
        width = 0
        for entry in entries:
            if isinstance(entry, (list, tuple)):
                emit(entry, depth + 1, margin + max(width, indent))
                continue
            marker = f"{number}." if ordered else "-"
            width = len(marker) + 1
            lines.append(f"{' ' * margin}{marker} {entry}")
            number += 1

    emit(items, 0, 0)
    return "\n".join(lines)


def blockquote(text: str, width: int | None = None) -> str:
    """Quote *text* with "> " before every line; with *width*, refill it first.

    Paragraphs (separated by blank lines) stay apart with a bare ">" line.
    """
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    blocks = []
    for paragraph in paragraphs:
        if width is not None:
            blocks.append(fill(paragraph, width, indent="> "))
        else:
            blocks.append("\n".join(f"> {line}".rstrip() for line in paragraph.splitlines()))
    return "\n>\n".join(blocks)


def _cell(value: str, max_width: int | None) -> str:
    """Escape pipes in a cell and, with *max_width*, wrap it with <br> between lines."""
    value = value.replace("|", r"\|").replace("\n", " ")
    if max_width is not None and len(value) > max_width:
        value = "<br>".join(wrap(value, max_width))
    return value


def markdown_table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[Any],
    align: str | None = None,
    max_width: int | None = None,
) -> str:
    """Format *rows* as a GitHub-flavoured Markdown table.

    Cells are converted as by textkit.table (None is empty, short rows are
    padded) and padded so the source lines up. Pipes in cells are escaped.
    *align* holds "l", "r" or "c" per column and sets the colons of the
    delimiter row. With *max_width*, longer cells are word-wrapped and their
    lines joined with ``<br>``.
    """
    cells = normalize_rows(rows, headers)
    cells = [[_cell(c, max_width) for c in row] for row in cells]
    ncols = len(cells[0])
    if ncols == 0:
        raise ValueError("a Markdown table needs at least one column")
    align = check_align(align, ncols)
    widths = [max(w, 3) for w in column_widths(cells)]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(pad(c, w, a) for c, w, a in zip(row, widths, align)) + " |"

    def rule(width: int, how: str) -> str:
        if how == "c":
            return ":" + "-" * (width - 2) + ":"
        if how == "r":
            return "-" * (width - 1) + ":"
        return "-" * width

    out = [line(cells[0]), "| " + " | ".join(rule(w, a) for w, a in zip(widths, align)) + " |"]
    out.extend(line(row) for row in cells[1:])
    return "\n".join(out)
