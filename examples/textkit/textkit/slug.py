"""URL slugs."""

from __future__ import annotations

import re

from textkit._text import to_ascii
from textkit.case import split_identifier

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text: str, sep: str = "-", max_length: int | None = None) -> str:
    """Turn *text* into a lowercase ASCII slug.

    Accents are stripped, every run of other characters becomes one *sep*,
    and the slug never starts or ends with *sep*. With *max_length* the slug
    is cut to at most that many characters, at a separator when possible.
    """
    slug = _NON_WORD.sub(sep, to_ascii(text).lower()).strip(sep)
    if max_length is not None and len(slug) > max_length:
        cut = slug[:max_length]
        if sep and sep in cut and slug[max_length] != sep:
            cut = cut.rsplit(sep, 1)[0]
        slug = cut.strip(sep)
    return slug


def unique_slug(text: str, taken: set[str], sep: str = "-", max_length: int | None = None) -> str:
    """Return a slug for *text* that is not in *taken*, and add it to *taken*.

    The plain slug is used when it is free; otherwise a counter is appended,
    starting at 2: "report", "report-2", "report-3", ... Text without any
    letter or digit gets the slug "item".
    """
    base = slugify(text, sep=sep, max_length=max_length) or "item"
    candidate = base
    n = 2
    while candidate in taken:
        candidate = f"{base}{sep}{n}"
        n += 1
    taken.add(candidate)
    return candidate


def slugify_identifier(name: str, sep: str = "-") -> str:
    """Slug for a code identifier, splitting at case changes too.

    ``"parseHTTPResponse"`` gives ``"parse-http-response"`` where slugify
    would give ``"parsehttpresponse"``.
    """
    return slugify(" ".join(split_identifier(name)), sep=sep)
