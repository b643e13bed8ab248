import pytest

from indexlib import camel, kebab, snake, title


@pytest.mark.parametrize(
    "text, want",
    [("Hello World", "hello_world"), ("helloWorld", "hello_world"), ("  many   spaces ", "many_spaces"), ("", "")],
)
def test_snake(text, want):
    assert snake(text) == want


def test_kebab():
    assert kebab("Hello big_World") == "hello-big-world"


def test_camel():
    assert camel("hello big world") == "helloBigWorld"
    assert camel("") == ""


def test_title():
    assert title("hello_world-again") == "Hello World Again"
