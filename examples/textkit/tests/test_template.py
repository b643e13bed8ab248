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
