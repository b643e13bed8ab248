"""Tables of contents for Markdown documents."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from textkit.roman import to_roman
from textkit.slug import unique_slug

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE = re.compile(r"`([^`]*)`|\*\*(.+?)\*\*|\*(.+?)\*|\[([^\]]*)\]\([^)]*\)")


@dataclass
class Heading:
    """One heading of a document and the headings nested under it."""

    level: int
    title: str
    anchor: str
    line: int = 0
    children: list[Heading] = field(default_factory=list)

    def walk(self) -> Iterator[Heading]:
        """This heading, then its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


class TableOfContents:
    """Headings collected from a document, nested by level.

    Anchors are unique slugs of the titles, as most Markdown renderers make
    them: a second "Usage" heading gets the anchor "usage-2".
    """

    NUMBERINGS = (None, "decimal", "roman")

    def __init__(self, max_depth: int = 3, numbering: str | None = None) -> None:
        if numbering not in self.NUMBERINGS:
            raise ValueError(f"numbering must be one of {self.NUMBERINGS}, got {numbering!r}")
        self.max_depth = max_depth
        self.numbering = numbering
        self.roots: list[Heading] = []
        self._anchors: set[str] = set()
        self._stack: list[Heading] = []

    @property
    def max_depth(self) -> int:
        """The deepest heading level kept, 1 to 6; deeper headings still get anchors."""
        return self._max_depth

    @max_depth.setter
    def max_depth(self, value: int) -> None:
        if not 1 <= value <= 6:
            raise ValueError(f"max_depth must be between 1 and 6, got {value}")
        self._max_depth = value

    @staticmethod
    def parse_heading(line: str) -> tuple[int, str] | None:
        """Read an ATX heading line ("## Title ##") as (level, title), or None."""
        match = _ATX.match(line)
        if match is None:
            return None
        return len(match.group(1)), match.group(2).strip()

    @staticmethod
    def plain_title(title: str) -> str:
        """Drop inline Markdown (code, emphasis, links) from a heading title."""
        return _INLINE.sub(lambda m: next(g for g in m.groups() if g is not None), title)

    @classmethod
    def from_markdown(cls, text: str, max_depth: int = 3, numbering: str | None = None) -> TableOfContents:
        """Collect the headings of a Markdown document, skipping fenced code blocks."""
        toc = cls(max_depth=max_depth, numbering=numbering)
        fence: str | None = None
        for number, line in enumerate(text.splitlines(), 1):
            opening = _FENCE.match(line)
            if fence is not None:
                if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                    fence = None
                continue
            if opening:
                fence = opening.group(1)
                continue
            parsed = cls.parse_heading(line)
            if parsed is not None:
                toc.add(parsed[0], parsed[1], line=number)
        return toc

    def add(self, level: int, title: str, line: int = 0) -> Heading | None:
        """Add a heading; return it, or None when it is deeper than max_depth.

        Its anchor is reserved either way, so that later anchors match the
        document's. A heading nests under the nearest previous one of a
        lower level.
        """
        if not 1 <= level <= 6:
            raise ValueError(f"heading level must be between 1 and 6, got {level}")
        plain = self.plain_title(title)
        heading = Heading(level, plain, unique_slug(plain, self._anchors), line)
        if level > self.max_depth:
            return None
        while self._stack and self._stack[-1].level >= level:
            self._stack.pop()
        (self._stack[-1].children if self._stack else self.roots).append(heading)
        self._stack.append(heading)
        return heading

    def __iter__(self) -> Iterator[Heading]:
        for root in self.roots:
            yield from root.walk()

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def _number(self, path: list[int]) -> str:
        """Section number for a position, e.g. [2, 1] -> "2.1." or "II.1."."""
        first = to_roman(path[0]) if self.numbering == "roman" else str(path[0])
        return ".".join([first] + [str(n) for n in path[1:]]) + "."

    def render(self, indent: int = 2, bullet: str = "-") -> str:
        """Write the contents as a nested Markdown list of links to the anchors.

        With numbering, each entry starts with its section number.
        """
        lines: list[str] = []

        def visit(headings: list[Heading], depth: int, path: list[int]) -> None:
            for i, heading in enumerate(headings, 1):
                label = heading.title
                if self.numbering:
                    label = f"{self._number(path + [i])} {label}"
                lines.append(f"{' ' * indent * depth}{bullet} [{label}](#{heading.anchor})")
                visit(heading.children, depth + 1, path + [i])

        visit(self.roots, 0, [])
        return "\n".join(lines)


def build_toc(markdown: str, max_depth: int = 3, numbering: str | None = None) -> str:
    """Return the rendered table of contents of a Markdown document."""
    return TableOfContents.from_markdown(markdown, max_depth, numbering).render()


def add_anchors(markdown: str) -> str:
    """Append ``{#anchor}`` to every heading line, with the anchors build_toc links to."""
    toc = TableOfContents.from_markdown(markdown, max_depth=6)
    by_line = {h.line: h.anchor for h in toc}
    lines = markdown.splitlines()
    for number, anchor in by_line.items():
        lines[number - 1] = f"{lines[number - 1].rstrip()} {{#{anchor}}}"
    return "\n".join(lines)
