"""Several textkit modules working together, as an application would use them."""

from textkit import case, diffing, fuzzy, humanize, markdown, stats, template, toc
from textkit.dates import format_duration, parse_duration
from textkit.slug import unique_slug
from textkit.table import format_records

from helpers import block

REPORT = """\
{{ title|headline|markdown_heading }}

{{ stats.words|plural:word }} in {{ stats.sentences|plural:sentence }}, read in {{ time }}.

{{ words }}

{{ title|headline|markdown_heading2 }}

{{ summary }}
"""


def make_report(title: str, text: str) -> str:
    """Render REPORT for *text*: headings, a stats line, a top-words table and a summary."""
    figures = stats.TextStats.from_text(text)
    context = {
        "title": title,
        "stats": figures,
        "time": figures.reading_time(),
        "words": markdown.markdown_table(stats.top_words(text, 3), ["word", "count"], align="lr"),
        "summary": markdown.blockquote(stats.summarize(text, 1), width=40),
    }
    filters = dict(template.FILTERS)
    try:
        template.register_filter("markdown_heading")(template.text_filter(markdown.heading))
        template.register_filter("markdown_heading2")(template.text_filter(lambda t: markdown.heading(t + " in brief", 2)))
        return template.render(REPORT, context)
    finally:
        template.FILTERS.clear()
        template.FILTERS.update(filters)


def test_report_from_article(article):
    report = make_report("notes on the garden", article)
    assert report == block(
        """
        # Notes on the Garden

        42 words in 7 sentences, read in 12 seconds.

        | word   | count |
        | ------ | ----: |
        | light  |     3 |
        | soil   |     3 |
        | garden |     2 |

        ## Notes on the Garden in brief

        > A small garden needs water, light and
        > good soil.
        """
    ) + "\n"
    assert "markdown_heading" not in template.FILTERS


def test_report_table_of_contents(article):
    report = make_report("notes on the garden", article)
    assert toc.build_toc(report) == block(
        """
        - [Notes on the Garden](#notes-on-the-garden)
          - [Notes on the Garden in brief](#notes-on-the-garden-in-brief)
        """
    )


def test_section_anchors_match_unique_slugs():
    titles = ["Overview", "Install", "Overview", "FAQ", "faq"]
    document = "\n\n".join(markdown.heading(t, 2) for t in titles)
    taken: set[str] = set()
    expected = [unique_slug(t, taken) for t in titles]
    assert [h.anchor for h in toc.TableOfContents.from_markdown(document)] == expected
    assert expected == ["overview", "install", "overview-2", "faq", "faq-2"]


def test_command_suggestions():
    commands = [case.kebab_case(name) for name in ("readFile", "writeFile", "listDir", "removeDir")]
    assert commands == ["read-file", "write-file", "list-dir", "remove-dir"]
    assert fuzzy.best_match("reed-file", commands) == "read-file"
    assert fuzzy.best_match(case.kebab_case("ListDirs"), commands) == "list-dir"
    assert [c for c, _ in fuzzy.rank("dir", commands, scorer="token", cutoff=0.5)] == ["list-dir", "remove-dir"]


def test_change_summary():
    old = "alpha\nbeta\ngamma\n"
    new = "alpha\ngamma\ndelta\nepsilon\n"
    changes = diffing.line_diff(old, new)
    added = sum(line.startswith("+ ") for line in changes)
    removed = sum(line.startswith("- ") for line in changes)
    line = template.render(
        "{{ added|plural:line }} added, {{ removed|plural:line }} removed",
        {"added": added, "removed": removed},
    )
    assert line == "2 lines added, 1 line removed"


def test_durations_table():
    tasks = [
        {"task": "build", "took": "1h30m"},
        {"task": "test", "took": "45s"},
        {"task": "deploy", "took": "2d 4h"},
    ]
    rows = [{"task": t["task"], "took": format_duration(parse_duration(t["took"]))} for t in tasks]
    assert format_records(rows) == block(
        """
        task   | took
        -------+-------------------
        build  | 1 hour, 30 minutes
        test   | 45 seconds
        deploy | 2 days, 4 hours
        """
    )
    total = sum((parse_duration(t["took"]) for t in tasks), parse_duration("0s"))
    assert format_duration(total, precision=3) == "2 days, 5 hours, 30 minutes"
    assert humanize.ordinal(len(tasks)) == "3rd"
