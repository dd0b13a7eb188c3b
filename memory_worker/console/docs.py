"""The documentation the console serves (§15): ``docs/*.md``, bundled with the package.

The pages ship inside the wheel as ``memory_worker.docs`` (setup.py maps the repository's
``docs/`` there, as it maps ``config/``); a checkout or an editable install reads the source
tree's ``docs/``. The console serves each page at ``/docs/NAME.md`` — the same relative
names the pages link each other by — so the outage banner's runbook links
(``MEMORY_CONSOLE_RUNBOOK_URL``, ``/docs/runbook.md`` by default) work with no docs site.

Markdown becomes HTML through markdown-it-py (CommonMark plus tables; raw HTML in a page is
shown as text). Every heading gets the anchor MkDocs gives it (Python-Markdown's ``toc``
slug, ``_1``… for repeats), so an anchor that works on the built site works here, and
:func:`anchors` lists them for the tests that check links into the runbook.

Pure functions over the bundled files; the aiohttp handler lives in ``app.py``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from markdown_it import MarkdownIt
from markdown_it.token import Token

#: A page name the console serves: ``runbook.md``, ``console-outage.png``.
PAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.(md|png)$")
#: The page ``/docs`` opens.
INDEX = "index.md"


def docs_dir() -> Traversable:
    """The bundled pages: the package's ``docs`` (a wheel), else the source tree's ``docs/``."""
    shipped = resources.files("memory_worker") / "docs"
    if shipped.is_dir():
        return shipped
    return resources.files("memory_worker").joinpath("..", "docs")


def slug(text: str) -> str:
    """The anchor MkDocs gives a heading (Python-Markdown ``toc.slugify``, separator ``-``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    cleaned = re.sub(r"[^\w\s-]", "", ascii_text).strip().lower()
    return re.sub(r"[-\s]+", "-", cleaned)


def _heading_text(inline: Token) -> str:
    return "".join(
        child.content for child in inline.children or () if child.type in {"text", "code_inline"}
    )


def _unique(wanted: str, used: set[str]) -> str:
    """``wanted``, or ``wanted_1``, ``wanted_2``… as the toc extension numbers repeats."""
    candidate, n = wanted, 0
    while candidate in used or not candidate:
        n += 1
        candidate = f"{wanted}_{n}"
    used.add(candidate)
    return candidate


@dataclass(frozen=True, slots=True)
class Page:
    name: str
    title: str
    html: str
    anchors: tuple[str, ...]


def render(name: str, text: str) -> Page:
    """One page as HTML with its headings' anchors (pure)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    used: set[str] = set()
    title = name
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        words = _heading_text(tokens[i + 1])
        if token.tag == "h1" and title == name:
            title = words
        token.attrSet("id", _unique(slug(words), used))
    html = md.renderer.render(tokens, md.options, {})
    return Page(name, title, html, tuple(sorted(used)))


def names() -> list[str]:
    """Every bundled page and image, by name."""
    return sorted(p.name for p in docs_dir().iterdir() if PAGE_NAME.match(p.name))


@functools.lru_cache(maxsize=64)
def page(name: str) -> Page | None:
    """The bundled page ``name`` rendered (None: no such page). Cached: the files ship with
    the package and do not change while it runs."""
    if not name.endswith(".md") or name not in names():
        return None
    return render(name, (docs_dir() / name).read_text(encoding="utf-8"))


def image(name: str) -> bytes | None:
    """A bundled image's bytes (None: no such image)."""
    if not name.endswith(".png") or name not in names():
        return None
    return (docs_dir() / name).read_bytes()


def anchors(name: str) -> frozenset[str]:
    """The heading anchors of bundled page ``name`` (empty when there is no such page)."""
    found = page(name)
    return frozenset(found.anchors if found else ())
