"""Build the Unstructured element fixtures of this folder from real pages of tests/data.

Run from the repository root: ``python tests/data/unstructured/build.py``. Needs
``unstructured`` (its element classes only: no partitioner, no model, no network).

Each page is laid out as a PDF partitioned by ``partition_pdf(strategy="hi_res")`` and
``partition_html`` would give it: one element per block with Unstructured's own
classes, list markers stripped (``ListItem`` text has no number), ``category_depth``
as the HTML partitioner sets it (headings 0-based, list items counting their enclosing
lists from 1), note labels as their own ``Title`` ("Note", "注意"), a running page
header and footer, boxes on a letter page in the page's coordinate system, ids hashed
as the partitioners hash them, and ``parent_id`` from Unstructured's own
``set_element_hierarchy``. The structure comes from the Markdown source, read with
procedure_rag's Markdown reader; the layout (line wrap, page breaks) is synthetic.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from unstructured.documents.coordinates import CoordinateSystem, PixelSpace, PointSpace
from unstructured.documents.elements import (
    CodeSnippet,
    CoordinatesMetadata,
    Element,
    ElementMetadata,
    Footer,
    Header,
    Image,
    ListItem,
    NarrativeText,
    Title,
)
from unstructured.partition.common.metadata import set_element_hierarchy
from unstructured.staging.base import elements_to_json

from procedure_rag._readers.markdown import iter_markdown
from procedure_rag._types import ElementKind, LayoutElement

HERE = Path(__file__).resolve().parent
DATA = HERE.parent

_INLINE = re.compile(r"\*\*|(?<!\w)\*|\*(?!\w)|`|\\(?=\n|$)")
_IMG = re.compile(r"""<img[^>]*?src="\$withBase\('(?P<src>[^']+)'\)"[^>]*?alt="(?P<alt>[^"]*)\"""")
_LABELS = {
    "en": {"note": "Note", "important": "Important", "warning": "Warning", "tip": "Tip"},
    "ja": {"note": "メモ", "important": "重要", "warning": "警告", "tip": "ヒント"},
}


@dataclass(frozen=True)
class Page:
    """A page in a coordinate system, laid out top to bottom (in screen units)."""

    system: CoordinateSystem
    scale: float  # screen units of a 1700 x 2200 px page per system unit

    def points(self, left: float, top: float, right: float, bottom: float) -> tuple[tuple[float, float], ...]:
        s, h = self.scale, self.system.height
        if isinstance(self.system, PointSpace):  # origin bottom-left, y up
            top, bottom = h - top / s, h - bottom / s
            return ((left / s, top), (left / s, bottom), (right / s, bottom), (right / s, top))
        return ((left, top), (left, bottom), (right, bottom), (right, top))


class Layout:
    """Places blocks on pages; starts a page (with header and footer) when one is full."""

    def __init__(self, page: Page, header: str, lang: str) -> None:
        self.page_spec = page
        self.header = header
        self.char_width = 18 if lang == "en" else 34
        self.elements: list[Element] = []
        self.page = 0
        self.y = 0.0
        self.new_page()

    def new_page(self) -> None:
        if self.page:
            self.add(Footer(str(self.page)), 150, 2100, 1550, 2140, furniture=True)
        self.page += 1
        self.add(Header(self.header), 150, 80, 1550, 120, furniture=True)
        self.y = 200

    def add(
        self,
        element: Element,
        left: float,
        top: float,
        right: float,
        bottom: float,
        *,
        furniture: bool = False,
    ) -> None:
        if not furniture and bottom > 2040:
            self.new_page()
            top, bottom = self.y, self.y + (bottom - top)
        element.metadata = ElementMetadata(
            page_number=self.page,
            coordinates=CoordinatesMetadata(
                points=self.page_spec.points(left, top, right, bottom), system=self.page_spec.system
            ),
            category_depth=element.metadata.category_depth,
            image_url=element.metadata.image_url,
        )
        self.elements.append(element)
        if not furniture:
            self.y = bottom + 24

    def block(self, element: Element, indent: int, *, height: float | None = None) -> None:
        left = 150 + 60 * indent
        if height is None:
            per_line = max(1, int((1550 - left) / self.char_width))
            lines = sum(max(1, math.ceil(len(ln) / per_line)) for ln in element.text.splitlines() or [""])
            height = 36 * lines + 4
        self.add(element, left, self.y, 1550, self.y + height)

    def finish(self) -> list[Element]:
        self.add(Footer(str(self.page)), 150, 2100, 1550, 2140, furniture=True)
        for i, element in enumerate(self.elements):
            element.id_to_hash(i)
        return set_element_hierarchy(self.elements)


def _plain(text: str) -> str:
    return " ".join(_INLINE.sub("", text).split())


def _indent(el: LayoutElement, levels: dict[str, int]) -> int:
    if el.kind is ElementKind.LIST_ITEM:
        return el.level + 1
    return levels.get(el.parent_id or "", -1) + 2 if el.parent_id else 0


def build(source: Path, page: Page, lang: str) -> list[Element]:
    text = source.read_text(encoding="utf-8")
    elements = [e for e in iter_markdown(text, source_id="page") if e.kind is not ElementKind.FRONT_MATTER]
    title = next(e.text for e in elements if e.kind is ElementKind.SECTION_HEADER)
    layout = Layout(page, title, lang)
    levels = {e.element_id: e.level for e in elements if e.kind is ElementKind.LIST_ITEM}
    for el in elements:
        indent = _indent(el, levels)
        meta = ElementMetadata
        if el.kind is ElementKind.SECTION_HEADER:
            layout.block(Title(_plain(el.text), metadata=meta(category_depth=el.level - 1)), 0, height=56)
        elif el.kind is ElementKind.LIST_ITEM:
            layout.block(ListItem(_plain(el.text), metadata=meta(category_depth=el.level + 1)), indent)
        elif el.kind is ElementKind.PICTURE:
            layout.block(Image(el.text, metadata=meta(image_url=el.hint("url"))), indent, height=420)
        elif el.kind is ElementKind.CODE:
            layout.block(CodeSnippet(el.text), indent)
        elif el.hint("html") and el.span is not None:
            m = _IMG.search(text, el.span.start, el.span.end)
            if m is not None:
                layout.block(Image(m["alt"], metadata=meta(image_url=m["src"])), indent, height=420)
        elif el.admonition == "※":
            layout.block(NarrativeText(_plain(el.text)), indent)
        elif el.admonition:
            layout.block(Title(_LABELS[lang][el.admonition]), indent, height=44)
            layout.block(NarrativeText(_plain(el.text)), indent)
        elif el.text.strip():
            layout.block(NarrativeText(_plain(el.text)), indent)
    return layout.finish()


FIXTURES = {
    "hololens-recovery.en.json": (
        DATA / "hololens/en/hololens-recovery.md",
        Page(PixelSpace(1700, 2200), 1.0),
        "en",
    ),
    "group.ja.json": (
        DATA / "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
        Page(PointSpace(612, 792), 1700 / 612),
        "ja",
    ),
}


def main() -> int:
    for name, (source, page, lang) in FIXTURES.items():
        (HERE / name).write_text(
            elements_to_json(build(source, page, lang), indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
