"""Errors in fixtures, at setup and at teardown."""
import pytest


@pytest.fixture
def broken_setup():
    raise NameError("name 'config' is not defined")


@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("teardown went wrong")


@pytest.fixture
def fine():
    yield 2


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    assert broken_teardown == 1


def test_call_and_teardown_fail(broken_teardown):
    assert broken_teardown == 2


def test_missing_fixture(no_such_fixture):
    pass


def test_setup_and_teardown_error(broken_teardown, broken_setup):
    pass


def test_after_errors(fine):
    assert fine == 2


class TestClassFixture:
    @pytest.fixture(autouse=True)
    def _attr(self):
        self.value = {}.missing  # AttributeError at setup

    def test_method(self):
        pass
