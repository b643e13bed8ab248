"""Sequence comparison: longest common subsequence, opcodes and word diffs."""

from __future__ import annotations

from typing import Hashable, Sequence

from textkit._text import split_words

Opcode = tuple[str, int, int, int, int]


def _lcs_table(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[list[int]]:
    """table[i][j] is the LCS length of a[i:] and b[j:]."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(len(b) - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    return table


def lcs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Hashable]:
    """Return one longest common subsequence of *a* and *b*, as a list.

    Ties are broken towards the earliest elements of *a*.
    """
    table = _lcs_table(a, b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """Describe how to turn *a* into *b*, like difflib's get_opcodes.

    Each opcode is ``(tag, i1, i2, j1, j2)`` with tag "equal", "replace",
    "delete" or "insert": a[i1:i2] becomes b[j1:j2]. Adjacent deletions and
    insertions are merged into one "replace".
    """
    table = _lcs_table(a, b)
    steps: list[str] = []
    i, j = 0, 0
    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b) and a[i] == b[j]:
            steps.append("equal")
            i, j = i + 1, j + 1
        elif j == len(b) or (i < len(a) and table[i + 1][j] >= table[i][j + 1]):
            steps.append("delete")
            i += 1
        else:
            steps.append("insert")
            j += 1

    codes: list[Opcode] = []
    i = j = 0
    k = 0
    while k < len(steps):
        start_i, start_j = i, j
        if steps[k] == "equal":
            while k < len(steps) and steps[k] == "equal":
                i, j, k = i + 1, j + 1, k + 1
            codes.append(("equal", start_i, i, start_j, j))
            continue
        while k < len(steps) and steps[k] != "equal":
            if steps[k] == "delete":
                i += 1
            else:
                j += 1
            k += 1
        if i > start_i and j > start_j:
            tag = "replace"
        else:
            tag = "delete" if i > start_i else "insert"
        codes.append((tag, start_i, i, start_j, j))
    return codes


def ratio(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Similarity 2*M/T in [0, 1]: M matching elements, T elements in all.

    Two empty sequences are identical: 1.0.
    """
    total = len(a) + len(b)
    if total == 0:
        return 1.0
    return 2.0 * _lcs_table(a, b)[0][0] / total


def jaccard(a, b) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def ngrams(text: str, n: int = 2) -> list[str]:
    """The overlapping *n*-character pieces of *text*; text shorter than *n* is one piece."""
    if n < 1:
        raise ValueError("n must be at least 1")
    if len(text) <= n:
        return [text] if text else []
    return [text[i:i + n] for i in range(len(text) - n + 1)]


def word_diff(old: str, new: str) -> str:
    """Mark the word changes between *old* and *new*.

    Removed words appear as ``[-words-]`` and added ones as ``{+words+}``;
    whitespace is normalised to single spaces.
    """
    a, b = split_words(old), split_words(new)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag == "equal":
            out.extend(a[i1:i2])
            continue
        if tag in ("delete", "replace"):
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if tag in ("insert", "replace"):
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


def line_diff(old: str, new: str) -> list[str]:
    """Compare two texts line by line.

    Each output line starts with two characters: ``"  "`` for a line in both,
    ``"- "`` for a line only in *old* and ``"+ "`` for one only in *new*.
    """
    a, b = old.splitlines(), new.splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag == "equal":
            out.extend("  " + line for line in a[i1:i2])
            continue
        out.extend("- " + line for line in a[i1:i2])
        out.extend("+ " + line for line in b[j1:j2])
    return out
