"""A tiny library for collection's tests."""

from minilib.greet import greet

__all__ = ["greet"]
