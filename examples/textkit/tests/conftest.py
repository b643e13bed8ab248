import pytest

ARTICLE = """\
Gardens reward patience. A small garden needs water, light and good soil.

Most vegetables need six hours of light. Tomatoes need more light than lettuce!
Water the garden early in the morning.

Is the soil ready? Good soil crumbles in the hand."""

GUIDE = """\
# Getting started

Install the package.

## Install

```sh
# not a heading: a shell comment
pip install textkit
```

## Usage

### Slugs

### Tables

## Usage

# API reference
"""


@pytest.fixture
def article() -> str:
    """Three paragraphs of plain English prose."""
    return ARTICLE


@pytest.fixture
def guide() -> str:
    """A Markdown document with nested and repeated headings and a code fence."""
    return GUIDE
