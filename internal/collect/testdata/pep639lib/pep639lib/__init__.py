"""A tiny library for collection's tests, installable on Python 3.13 only."""

from pep639lib.words import initials

__all__ = ["initials"]
