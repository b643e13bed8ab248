"""One test per outcome the parser must tell apart."""
import pytest


def test_pass():
    assert 1 + 1 == 2


def test_assert_fails():
    assert [1, 2, 3] == [1, 2, 4]


def test_assert_message():
    assert False, "the total is wrong"


def test_name_error():
    return undefined_name  # noqa: F821


def test_attribute_error():
    return "text".no_such_method()


def test_type_error():
    return len(5)


def test_raises_miss():
    with pytest.raises(ValueError):
        int("12")


def test_fail_call():
    pytest.fail("explicit failure")


class CustomError(Exception):
    pass


def test_custom_exception():
    raise CustomError("multi\nline message")


@pytest.mark.skip(reason="skipped by marker")
def test_skip_marker():
    pass


def test_skip_inline():
    pytest.skip("skipped inside the test")


@pytest.mark.skipif(True, reason="always skipped by skipif")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert 0


@pytest.mark.xfail(reason="known bug, fixed")
def test_xpass():
    pass


@pytest.mark.xfail(reason="must fail", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.xfail(raises=TypeError, reason="only TypeError is expected")
def test_xfail_wrong_exception():
    raise ValueError("not a TypeError")


@pytest.mark.xfail(run=False, reason="not run")
def test_xfail_not_run():
    raise SystemExit(1)


def test_xfail_inline():
    pytest.xfail("xfailed inside the test")


def test_prints_and_passes(capsys):
    print("some output")
    assert True
