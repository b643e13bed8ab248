import pytest

from textkit.case import (
    SMALL_WORDS,
    camel_case,
    constant_case,
    kebab_case,
    pascal_case,
    snake_case,
    split_identifier,
    title_case,
)


@pytest.mark.parametrize(
    "text, words",
    [
        ("parseHTTPResponse2", ["parse", "HTTP", "Response", "2"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("  kebab-case  name ", ["kebab", "case", "name"]),
        ("XMLHttpRequest", ["XML", "Http", "Request"]),
        ("Crème brûlée", ["Creme", "brulee"]),
        ("", []),
    ],
)
def test_split_identifier(text, words):
    assert split_identifier(text) == words


@pytest.mark.parametrize(
    "text, expected",
    [
        ("parseHTTPResponse", "parse_http_response"),
        ("Hello World", "hello_world"),
        ("already_snake", "already_snake"),
        ("version2Beta", "version_2_beta"),
    ],
)
def test_snake_case(text, expected):
    assert snake_case(text) == expected


def test_kebab_and_constant_case():
    assert kebab_case("parseHttpResponse") == "parse-http-response"
    assert kebab_case("Max Retries!") == "max-retries"
    assert constant_case("max retries") == "MAX_RETRIES"
    assert constant_case("maxRetries") == "MAX_RETRIES"


def test_camel_and_pascal_case():
    assert camel_case("parse_http_response") == "parseHttpResponse"
    assert camel_case("Parse HTTP response") == "parseHttpResponse"
    assert pascal_case("parse_http_response") == "ParseHttpResponse"
    assert camel_case("") == ""
    assert pascal_case("--") == ""


def test_conversions_round_trip():
    for name in ("userId", "http_status_code", "PageTitle", "max-width"):
        assert snake_case(camel_case(name)) == snake_case(name)
        assert kebab_case(pascal_case(name)) == kebab_case(name)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the lord of the rings", "The Lord of the Rings"),
        ("a tale of two cities", "A Tale of Two Cities"),
        ("what are you looking at", "What Are You Looking At"),
        ("state-of-the-art design", "State-of-the-Art Design"),
        ("  the   iPhone and NASA  ", "The iPhone and NASA"),
        ("", ""),
    ],
)
def test_title_case(text, expected):
    assert title_case(text) == expected


def test_title_case_custom_small_words():
    assert title_case("war and peace") == "War and Peace"
    assert title_case("war and peace", small_words=frozenset()) == "War And Peace"
    assert "the" in SMALL_WORDS and "war" not in SMALL_WORDS
