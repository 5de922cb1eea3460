"""reStructuredText reader: Sphinx manuals, parsed with docutils.

docutils builds the document tree; this module walks it once. Sections give
heading levels (nesting depth, 1 = top), enumerated lists give the numbers a
reader sees (``#.`` lists read ``1.``, ``2.``…; ``(a)``-style keeps its prefix and
suffix), bullet lists keep their bullet, admonition directives (``note``,
``warning``, ``caution``, ``important``, ``tip``, generic ``admonition``) become notes,
``image``/``figure`` pictures and captions, tables (grid, simple, ``list-table``,
``csv-table``) Markdown pipe tables, literal and code blocks code. The Sphinx roles
that name UI elements stay recognisable as step targets: ``:kbd:`Ctrl+C``` reads
``**Ctrl+C**``, ``:guilabel:`OK``` reads ``[OK]`` and ``:menuselection:`A --> B```
reads ``[A > B]``; cross-reference roles read as their text.

Parsing never touches the network or the file system: ``include``, ``raw :file:``
and ``csv-table :url:`` are refused, configuration files are not read, and nothing
is reported to stderr. Sphinx's own directives and roles are unknown to plain
docutils; the common ones are registered with docutils (once, on first use) as
generic ones that keep their text. Unknown directives keep their content as text.

Spans are line ranges: docutils gives the line each block starts on (a section
title's underline), and a block covers the source up to where the next one starts.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import admonition_label
from procedure_rag._language.text import join_lines
from procedure_rag._readers.markup import BlockEmitter, format_number, place
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import ElementKind, LayoutElement

if TYPE_CHECKING:
    from docutils import nodes  # type: ignore[import-untyped]

__all__ = ["iter_rst", "read_rst"]

K = ElementKind

_SETTINGS: dict[str, object] = {
    "report_level": 5,  # report nothing
    "halt_level": 5,  # and never stop
    "warning_stream": False,
    "file_insertion_enabled": False,  # no include, no raw :file:/:url:, no csv-table :url:
    "raw_enabled": True,  # raw HTML is read for its visible text only
    "_disable_config": True,  # no docutils.conf from the working directory
    "doctitle_xform": False,  # every section stays a section, with its level
    "docinfo_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "pep_references": False,
    "rfc_references": False,
    "input_encoding": "unicode",
    "traceback": True,
    # docutils replaces the whole document with an error message when one line is longer
    # than this (10,000 by default): the input size limit is the chunker's to set.
    "line_length_limit": sys.maxsize,
}
# docutils' inline parser copies the rest of a paragraph at each markup character it
# stops at, so a paragraph costs about its length times its markup characters. Past
# this product (a few seconds of work) the paragraph is refused rather than read.
_MAX_INLINE_WORK = 100_000_000_000
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_INLINE_MARKS = re.compile(r"[*`|\[\]_<>:]")
_ENUM_STYLES = {"arabic": "1", "loweralpha": "a", "upperalpha": "A", "lowerroman": "i", "upperroman": "I"}
_ADMONITIONS = frozenset(
    {"note", "warning", "caution", "important", "tip", "hint", "attention", "danger", "error"}
)
_SKIPPED = frozenset(
    {
        "comment",
        "target",
        "substitution_definition",
        "pending",
        "transition",
        "meta",
        "decoration",
        "docinfo",
        "footnote_reference",
        "citation_reference",
    }
)
_WRAPPERS = frozenset({"block_quote", "container", "compound", "topic", "sidebar", "legend", "document"})
_FLAT_TEXT = frozenset({"line_block", "option_list", "field_list", "definition_list_item"})
_MAX_DEPTH = 48
_ROLE_SYNTAX = re.compile(r"^:(?:[\w.+-]+:)+`(?P<text>.*)`$", re.DOTALL)
_XREF_TARGET = re.compile(r"^(?P<title>.+?)\s*<[^<>]+>$", re.DOTALL)
_TAG = re.compile(r"<[^<>]{0,2000}>")
_OPTION_LINE = re.compile(r"^\s*:[\w-]+:")
# Where blocks that docutils places by the line after their end start.
_CODE_START = re.compile(r"^[ \t]*\.\. (?:code-block|code|sourcecode)::", re.MULTILINE)
_MATH_START = re.compile(r"^[ \t]*\.\. math::", re.MULTILINE)

# Sphinx names plain docutils does not know.
_UI_ROLES = ("kbd", "guilabel", "menuselection")
_LITERAL_ROLES = (
    "file",
    "samp",
    "command",
    "program",
    "option",
    "envvar",
    "makevar",
    "mimetype",
    "regexp",
    "confval",
)
_XREF_ROLES = ("ref", "doc", "term", "numref", "any", "download", "keyword", "token", "dfn", "manpage", "eq")
_BODY_DIRECTIVES = {
    "only": "",
    "ifconfig": "",
    "hlist": "",
    "glossary": "",
    "centered": "",
    "tab": "",
    "group-tab": "",
    "tabs": "",
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "versionremoved": "Removed in version",
    "deprecated": "Deprecated since version",
}
_NOTE_DIRECTIVES = ("seealso", "todo")
_IGNORED_DIRECTIVES = (
    "toctree",
    "index",
    "highlight",
    "tabularcolumns",
    "sectionauthor",
    "moduleauthor",
    "codeauthor",
    "literalinclude",
    "currentmodule",
    "default-domain",
    "rst-class",
    "cssclass",
    "autosummary",
)


def _ui_text(name: str, text: str) -> str:
    """A UI role's text in the form the lexicon's UI-label pattern finds."""
    if name == "kbd":
        return f"**{text}**"
    if name == "menuselection":
        return "[" + " > ".join(p.strip() for p in text.split("-->")) + "]"
    return "[" + text.replace("&&", "\0").replace("&", "").replace("\0", "&") + "]"


def _xref_text(text: str) -> str:
    """What Sphinx shows for a cross reference: its title, or the target's last part."""
    m = _XREF_TARGET.match(text)
    if m:
        return m.group("title")
    text = text.lstrip("!")
    return text.rsplit(".", 1)[-1] if text.startswith("~") else text


@cache
def _register_sphinx_names() -> None:
    """Teach docutils the common Sphinx roles and directives (global in docutils; done once)."""
    from docutils import nodes  # noqa: PLC0415 - optional dependency, imported on first use
    from docutils.parsers.rst import Directive, directives, roles  # type: ignore[import-untyped]  # noqa: PLC0415

    def role(kind: str) -> Callable[..., tuple[list[Any], list[Any]]]:
        def run(
            name: str, rawtext: str, text: str, *_args: object, **_kwargs: object
        ) -> tuple[list[Any], list[Any]]:
            from docutils.utils import unescape  # type: ignore[import-untyped]  # noqa: PLC0415

            text = unescape(text)
            if kind == "ui":
                return [nodes.inline(rawtext, _ui_text(name.lower(), text))], []
            if kind == "literal":
                return [nodes.literal(rawtext, text)], []
            return [nodes.inline(rawtext, _xref_text(text))], []

        return run

    class AnyOptions(dict[str, Callable[[str], object]]):
        def __missing__(self, key: str) -> Callable[[str], object]:
            return directives.unchanged  # type: ignore[no-any-return]

    class Body(Directive):  # type: ignore[misc]
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec: ClassVar[dict[str, Callable[[str], object]]] = AnyOptions()

        def run(self) -> list[Any]:
            node = nodes.note() if self.name in _NOTE_DIRECTIVES else nodes.container()
            label = _BODY_DIRECTIVES.get(self.name, "")
            lead = " ".join(part for part in (label, *self.arguments) if part)
            if lead:
                para = nodes.paragraph(lead, lead)
                para.line = self.lineno
                node += para
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    class Ignored(Body):
        def run(self) -> list[Any]:
            return []

    for name in _UI_ROLES:
        roles.register_local_role(name, role("ui"))
    for name in _LITERAL_ROLES:
        roles.register_local_role(name, role("literal"))
    for name in _XREF_ROLES:
        roles.register_local_role(name, role("xref"))
    for name in (*_BODY_DIRECTIVES, *_NOTE_DIRECTIVES):
        directives.register_directive(name, Body)
    for name in _IGNORED_DIRECTIVES:
        directives.register_directive(name, Ignored)


def _raw_html_lines(text: str) -> list[str]:
    lines = (html.unescape(ln).strip() for ln in _TAG.sub(" ", text).splitlines())
    return [re.sub(r"\s+", " ", ln) for ln in lines if ln]


class _RstWalker:
    """Walks a docutils document tree and feeds a :class:`BlockEmitter`."""

    def __init__(self, out: BlockEmitter, lines: Sequence[str]) -> None:
        self.out = out
        self.lines = lines

    # -- where blocks start ---------------------------------------------------------------
    def line_of(self, node: nodes.Node) -> int | None:
        line = getattr(node, "line", None)
        return line - 1 if isinstance(line, int) and line > 0 else None

    def title_line(self, title: nodes.Node) -> int | None:
        """0-based line of a section title's text (docutils gives its underline), or its overline."""
        under = self.line_of(title)
        if under is None or under < 1:
            return under
        start = under - 1
        adornment = self.lines[under].strip()[:1] if under < len(self.lines) else ""
        above = self.lines[start - 1].strip() if start >= 1 else ""
        if adornment and above and set(above) == {adornment}:
            start -= 1
        return start

    # -- text ------------------------------------------------------------------------------
    def inline(self, node: nodes.Node, *, marks: bool = True) -> str:
        """The text of an inline container, inline markup kept as Markdown marks."""
        from docutils import nodes  # noqa: PLC0415

        parts: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                parts.append(str(child))
            elif child.tagname in _SKIPPED or isinstance(child, nodes.system_message):
                continue
            elif isinstance(child, nodes.strong) and marks:
                parts.append(f"**{self.inline(child, marks=False)}**")
            elif isinstance(child, nodes.literal) and marks:
                parts.append(f"`{child.astext()}`")
            elif isinstance(child, nodes.image):
                parts.append(f"![{child.get('alt', '')}]" if child.get("alt") else "")
            elif isinstance(child, nodes.problematic):
                m = _ROLE_SYNTAX.match(child.astext())
                parts.append(_xref_text(m.group("text")) if m else child.astext())
            elif isinstance(child, nodes.raw):
                parts.append(
                    " ".join(_raw_html_lines(child.astext())) if "html" in child.get("format", "") else ""
                )
            else:
                parts.append(self.inline(child, marks=marks))
        return "".join(parts)

    def flat(self, node: nodes.Node, depth: int = 0) -> list[str]:  # noqa: PLR0911 - one case a kind
        """The visible lines of any block, lists with their markers (for notes, cells, fields)."""
        from docutils import nodes  # noqa: PLC0415

        if depth > _MAX_DEPTH:
            return [ln.strip() for ln in node.astext().splitlines() if ln.strip()]
        if isinstance(node, nodes.TextElement):
            text = self.inline(node)
            if isinstance(node, nodes.FixedTextElement):
                return [ln.rstrip() for ln in text.splitlines() if ln.strip()]
            return [join_lines([ln.strip() for ln in text.splitlines()])] if text.strip() else []
        if isinstance(node, nodes.Text):
            return [str(node).strip()] if str(node).strip() else []
        if node.tagname in _SKIPPED or isinstance(node, nodes.system_message):
            return []
        out: list[str] = []
        if isinstance(node, nodes.enumerated_list | nodes.bullet_list):
            for number, item in zip(self.numbers(node), node.children, strict=False):
                lines = self.flat(item, depth + 1)
                if lines:
                    out.append(f"{number} {lines[0]}")
                    out.extend(lines[1:])
            return out
        if isinstance(node, nodes.field):
            name, *body = node.children
            lines = [ln for child in body for ln in self.flat(child, depth + 1)]
            head = self.inline(name)
            return [f"{head}: {lines[0]}" if lines else head, *lines[1:]]
        for child in node.children:
            out.extend(self.flat(child, depth + 1))
        return out

    def numbers(self, node: nodes.Element) -> list[str]:
        """The markers of a list's items as a reader sees them."""
        count = len(node.children)
        if node.tagname == "bullet_list":
            return [str(node.get("bullet", "-"))] * count
        style = _ENUM_STYLES.get(str(node.get("enumtype", "arabic")), "1")
        start = int(node.get("start", 1))
        prefix, suffix = str(node.get("prefix", "")), str(node.get("suffix", "."))
        return [f"{prefix}{format_number(start + i, style)}{suffix}" for i in range(count)]

    # -- blocks ----------------------------------------------------------------------------
    def body(self, node: nodes.Node, level: int, depth: int) -> None:
        for child in node.children:
            self.block(child, level, depth + 1)

    def block(self, node: nodes.Node, level: int, depth: int) -> None:  # noqa: PLR0912 - one dispatch table
        from docutils import nodes  # noqa: PLC0415

        name = node.tagname
        line = self.line_of(node)
        if name in _SKIPPED:
            return
        if depth > _MAX_DEPTH:
            self.out.paragraph(self.flat(node), line)
        elif isinstance(node, nodes.section):
            self.section(node, level, depth)
        elif isinstance(node, nodes.paragraph):
            text = self.inline(node)
            self.out.paragraph([ln.strip() for ln in text.splitlines()], line)
        elif isinstance(node, nodes.enumerated_list | nodes.bullet_list):
            self.list(node, level, depth)
        elif name in _ADMONITIONS or isinstance(node, nodes.admonition):
            self.admonition(node, line)
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            classes = [c for c in node.get("classes", []) if c != "code"]
            lang = str(node.get("language", "")) or (classes[0] if classes else "")
            hints = (("language", lang),) if lang else ()
            pattern = _CODE_START if "code" in node.get("classes", []) else None
            self.out.block(K.CODE, node.astext().rstrip(), None, hints=hints, pattern=pattern, before=line)
        elif isinstance(node, nodes.math_block):
            self.out.block(K.FORMULA, node.astext().strip(), None, pattern=_MATH_START, before=line)
        elif isinstance(node, nodes.image):
            self.picture(node, "")
        elif isinstance(node, nodes.figure):
            self.figure(node, level, depth)
        elif isinstance(node, nodes.table):
            self.table(node, line)
        elif isinstance(node, nodes.definition_list):
            self.definitions(node, level, depth)
        elif isinstance(node, nodes.footnote | nodes.citation):
            self.out.block(K.FOOTNOTE, "\n".join(self.flat(node)), line)
        elif isinstance(node, nodes.raw):
            if "html" in str(node.get("format", "")):
                self.out.block(
                    K.TEXT, "\n".join(_raw_html_lines(node.astext())), line, hints=(("raw", "html"),)
                )
        elif isinstance(node, nodes.system_message):
            self.unknown_directive(node, line)
        elif isinstance(node, nodes.title | nodes.rubric | nodes.attribution | nodes.caption):
            self.out.paragraph([self.inline(node)], line)
        elif name in _FLAT_TEXT:
            self.out.paragraph(self.flat(node), line)
        elif isinstance(node, nodes.Element) and "contents" not in node.get("classes", []):
            self.body(node, level, depth)  # wrappers (block quotes, containers, topics) and the unknown

    def section(self, node: nodes.Element, level: int, depth: int) -> None:
        from docutils import nodes  # noqa: PLC0415

        children = list(node.children)
        if children and isinstance(children[0], nodes.title):
            title = children.pop(0)
            text = " ".join(self.inline(title, marks=False).split())
            self.out.heading(text, level + 1, self.title_line(title))
        for child in children:
            self.block(child, level + 1, depth + 1)

    def list(self, node: nodes.Element, level: int, depth: int) -> None:
        ordered = node.tagname == "enumerated_list"
        self.out.open_list()
        for number, item in zip(self.numbers(node), node.children, strict=False):
            self.out.open_item(number, ordered=ordered, line=self.line_of(item))
            self.body(item, level, depth)
            self.out.close_item()
        self.out.close_list()

    def admonition(self, node: nodes.Element, line: int | None) -> None:
        from docutils import nodes  # noqa: PLC0415

        children = list(node.children)
        label = admonition_label(node.tagname)
        lines: list[str] = []
        if children and isinstance(children[0], nodes.title):
            title = " ".join(self.inline(children.pop(0), marks=False).split())
            label = admonition_label(title)
            if not label:
                label, lines = "note", [title]
        for child in children:
            lines.extend(self.flat(child))
        self.out.block(K.TEXT, "\n".join(lines), line, admonition=label or "note")

    def picture(self, node: nodes.Element, caption: str) -> None:
        uri = str(node.get("uri", ""))
        text = str(node.get("alt", "")) or caption
        self.out.block(K.PICTURE, text, self.line_of(node), hints=(("url", uri),) if uri else ())

    def figure(self, node: nodes.Element, level: int, depth: int) -> None:
        from docutils import nodes  # noqa: PLC0415

        captions = [c for c in node.children if isinstance(c, nodes.caption)]
        caption = " ".join(self.inline(captions[0], marks=False).split()) if captions else ""
        for child in node.children:
            if isinstance(child, nodes.image):
                self.picture(child, caption)
            elif isinstance(child, nodes.caption):
                self.out.block(K.CAPTION, caption, self.line_of(child))
            else:
                self.block(child, level, depth + 1)

    def table(self, node: nodes.Element, line: int | None) -> None:
        from docutils import nodes  # noqa: PLC0415

        rows: list[list[str]] = []
        for row in node.findall(nodes.row):
            cells: list[str] = []
            for entry in row.children:
                cells.append(" ".join(self.flat(entry)))
                cells.extend([""] * min(int(entry.get("morecols", 0)), 100))
            rows.append(cells)
        titles = [c for c in node.children if isinstance(c, nodes.title)]
        if titles:  # the title reads first; the table is then found by its first cell
            self.out.block(K.CAPTION, " ".join(self.inline(titles[0]).split()), line)
        self.out.block(K.TABLE, pipe_table(rows), line)

    def definitions(self, node: nodes.Element, level: int, depth: int) -> None:
        from docutils import nodes  # noqa: PLC0415

        for item in node.children:
            for child in item.children:
                if isinstance(child, nodes.definition):
                    self.body(child, level, depth + 1)
                elif isinstance(child, nodes.term):
                    self.out.block(K.TEXT, self.inline(child), self.line_of(item), hints=(("term", "1"),))

    def unknown_directive(self, node: nodes.Element, line: int | None) -> None:
        """Unknown directives keep their content, malformed markup its text; other messages go."""
        from docutils import nodes  # noqa: PLC0415

        blocks = [c for c in node.children if isinstance(c, nodes.literal_block)]
        if node.get("type") != "ERROR" or not blocks:
            return
        first, *rest = blocks[0].astext().splitlines() or [""]
        if not first.lstrip().startswith(".."):  # malformed markup (a broken table): keep it as written
            body = "\n".join(ln.strip() for ln in (first, *rest) if ln.strip())
            self.out.block(K.TEXT, body, None, hints=(("malformed", "1"),), before=line)
            return
        while rest and (_OPTION_LINE.match(rest[0]) or not rest[0].strip()):
            rest.pop(0)
        text = join_lines([ln.strip() for ln in rest if ln.strip()])
        if first.startswith("..") and text:
            start = re.compile(rf"^[ \t]*{re.escape(first.strip())}", re.MULTILINE)
            hints = (("directive", first.strip()),)
            self.out.block(K.TEXT, text, None, hints=hints, pattern=start, before=line)


def iter_rst(
    source: str | bytes, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a reStructuredText document in reading order.

    Args:
        source: The document as ``str`` (or UTF-8 bytes).
        source_id: Id of the document; element ids start with it.
        options: The reader options; their step styles are recognised in paragraphs
            (``①``, ``（1）``, ``手順1``…); reST's own lists need none.

    Yields:
        One element per block, each with a span (a line range) into the text.

    Raises:
        ReaderError: For bytes that are not UTF-8, input that is not text, a
            document docutils cannot read (nesting too deep for its parser), or a
            block (text between blank lines) so long and so full of markup characters
            that docutils would take quadratic time over it (record ``"line N"``).
    """
    if isinstance(source, bytes | bytearray):
        try:
            source = bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ReaderError(
                "rst", "document", f"not valid UTF-8: {exc.reason} at byte {exc.start}"
            ) from None
    if not isinstance(source, str):
        raise ReaderError("rst", "document", f"expected str or bytes, got {type(source).__name__}")
    if not source.strip():
        return
    try:
        from docutils.core import publish_doctree  # type: ignore[import-untyped]  # noqa: PLC0415 - optional
    except ImportError as exc:  # pragma: no cover - docutils is a dependency
        msg = "reading reStructuredText needs docutils: pip install 'docutils>=0.20'"
        raise ImportError(msg) from exc
    _check_inline_work(source)
    _register_sphinx_names()
    out = BlockEmitter(source_id, options.step_styles, join=join_lines)
    try:
        document = publish_doctree(source, settings_overrides=dict(_SETTINGS))
        _RstWalker(out, source.splitlines()).body(document, 0, 0)
    except RecursionError:
        raise ReaderError("rst", "document", "the document nests too deeply to read") from None
    except Exception as exc:  # docutils raises many kinds; the caller gets one
        raise ReaderError(
            "rst", "document", f"docutils cannot read it: {type(exc).__name__}: {exc}"
        ) from None
    yield from place(out.drafts, source, universal_newlines=True)


def _check_inline_work(source: str) -> None:
    """Refuse a paragraph docutils would read in quadratic time (see ``_MAX_INLINE_WORK``)."""
    start = 0
    for gap in (*_BLANK_LINES.finditer(source), None):
        end = gap.start() if gap is not None else len(source)
        size = end - start
        if size * size > _MAX_INLINE_WORK:  # cheap test first: only long blocks can be too costly
            marks = len(_INLINE_MARKS.findall(source, start, end))
            if size * marks > _MAX_INLINE_WORK:
                line = source.count("\n", 0, start) + 1
                problem = (
                    f"the block at line {line} is {size:,} characters with {marks:,} markup characters, "
                    "too many for docutils to read in reasonable time: split it with blank lines, "
                    "or read the file as plain text (source_format='text')"
                )
                raise ReaderError("rst", f"line {line}", problem)
        start = gap.end() if gap is not None else end


def read_rst(
    source: str | bytes, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_rst` as a list."""
    return list(iter_rst(source, source_id=source_id, options=options))
