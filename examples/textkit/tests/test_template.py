import json

import pytest

from textkit import template


def test_render_variables():
    ctx = {"name": "Ada", "user": {"city": "London"}}
    assert template.render("Hi {{ name }} from {{user.city}}!", ctx) == "Hi Ada from London!"
    assert template.render("no tags", {}) == "no tags"
    with pytest.raises(template.TemplateError, match="undefined variable 'user.zip'"):
        template.render("{{ user.zip }}", ctx)


def test_render_filters():
    ctx = {"name": " ada lovelace ", "items": [1, 2, 3], "text": "abcdefghij"}
    assert template.render("{{ name|strip|title }}", ctx) == "Ada Lovelace"
    assert template.render("[{{ name | upper }}]", ctx) == "[ ADA LOVELACE ]"
    assert template.render("{{ items|length }} items", ctx) == "3 items"
    assert template.render("{{ text|truncate:4 }}", ctx) == "abcd..."
    assert template.render("{{ text|truncate }}", ctx) == "abcdefghij"


def test_render_unknown_filter():
    with pytest.raises(template.TemplateError, match="unknown filter 'shout'"):
        template.render("{{ name|shout }}", {"name": "x"})


def test_lookup_attributes():
    class User:
        city = "Paris"

    assert template.lookup({"user": User()}, "user.city") == "Paris"
    with pytest.raises(template.TemplateError):
        template.lookup({"user": User()}, "user.country")


@pytest.mark.parametrize(
    "tag, value, expected",
    [
        ("name|snake", "Page Title", "page_title"),
        ("name|headline", "the art of war", "The Art of War"),
        ("name|slug", "Crème brûlée!", "creme-brulee"),
        ("n|ordinal", 22, "22nd"),
        ("n|plural:file", 3, "3 files"),
        ("n|filesize:binary", 2048, "2.0 KiB"),
        ("n|roman:lower", 14, "xiv"),
        ("name|wrap:10", "one two three four", "one two\nthree four"),
    ],
)
def test_builtin_filters(tag, value, expected):
    key = tag.split("|")[0]
    assert template.render("{{ " + tag + " }}", {key: value}) == expected


def test_more_builtin_filters():
    ctx = {"title": "page title", "n": 2, "big": 1234567, "items": [1]}
    assert template.render("{{ title|camel }} {{ title|kebab }}", ctx) == "pageTitle page-title"
    assert template.render("{{ n|plural:person,folk }}", ctx) == "2 folk"
    assert template.render("{{ items|plural:item }}", ctx) == "1 item"
    assert template.render("{{ big|filesize }} {{ big|intcomma }}", ctx) == "1.2 MB 1,234,567"
    assert template.render("{{ n|roman }}", {"n": 2024}) == "MMXXIV"


def test_filter_argument_errors():
    with pytest.raises(template.TemplateError, match="needs a word"):
        template.render("{{ n|plural }}", {"n": 2})
    with pytest.raises(template.TemplateError, match="whole number"):
        template.render("{{ s|wrap:wide }}", {"s": "text"})


def test_register_filter(monkeypatch):
    monkeypatch.setattr(template, "FILTERS", dict(template.FILTERS))

    @template.register_filter("shout")
    def shout(value, arg):
        return str(value).upper() + (arg or "!")

    assert template.render("{{ w|shout }} {{ w|shout:?? }}", {"w": "hey"}) == "HEY! HEY??"
    with pytest.raises(ValueError, match="already registered"):
        template.register_filter("upper")(shout)


def test_text_filter_keeps_name():
    wrapped = template.text_filter(str.swapcase)
    assert wrapped.__name__ == "swapcase"
    assert wrapped("aBc", "ignored") == "AbC"


def test_variables():
    assert template.variables("{{ a }} {{ b.c|upper }} {{a|lower}}") == ["a", "b.c"]
    assert template.variables("plain") == []


def test_load_context(tmp_path):
    (tmp_path / "ctx.json").write_text(json.dumps({"name": "Ada"}), encoding="utf-8")
    (tmp_path / "ctx.toml").write_text('name = "Grace"\n[user]\ncity = "Arlington"\n', encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    assert template.load_context(tmp_path / "ctx.json") == {"name": "Ada"}
    ctx = template.load_context(str(tmp_path / "ctx.toml"))
    assert template.render("{{ name }} of {{ user.city }}", ctx) == "Grace of Arlington"
    with pytest.raises(template.TemplateError, match="must hold an object"):
        template.load_context(tmp_path / "list.json")
    with pytest.raises(template.TemplateError, match="unsupported"):
        template.load_context(tmp_path / "ctx.yaml")
