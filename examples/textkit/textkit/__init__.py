"""textkit: small text utilities, standard library only.

Each module stands on its own (``from textkit import slug``); a few of the
most used names are also available from the package itself.
"""

from textkit.slug import slugify, unique_slug
from textkit.stats import TextStats
from textkit.template import TemplateError, render
from textkit.toc import build_toc

__version__ = "0.4.0"

__all__ = ["TemplateError", "TextStats", "build_toc", "render", "slugify", "unique_slug", "__version__"]
