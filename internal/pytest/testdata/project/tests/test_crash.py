"""A test that kills the Python interpreter itself."""
import os


def test_ok():
    pass


def test_exits_process():
    os._exit(3)


def test_never_reached():
    pass
