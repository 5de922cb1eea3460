"""Build the cloud layout fixtures (Azure, Google Document AI, Textract) from real documents.

No cloud service is called. The real documents are read with this package's own
Markdown and plain-text readers; their blocks are printed onto pages (US Letter for
Azure, whose layout results state inches; A4 for the others), line by line, with a
running header, footer and page number, the way a PDF of the manual would look. Each
service's JSON is then written in the shape its documentation gives, as the service
would return it for that PDF: Azure paragraphs with roles, ``content`` and spans and
a ``sections`` tree; Google layout blocks nested under headings; Textract LINE/WORD
blocks under LAYOUT blocks. Step numbers stay in the printed text (Azure, Textract
OCR them); Google's list blocks carry them as ``ordered`` lists. Textract drops the
bullet glyphs, as it often does.

Run from the repo root: ``python tests/data/layout_json/make_fixtures.py``. The output
is deterministic; ``--check`` fails when the committed files differ.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from procedure_rag._language.text import is_cjk, join_lines
from procedure_rag._readers.markdown import iter_markdown
from procedure_rag._readers.plaintext import iter_plain_text
from procedure_rag._types import ElementKind, LayoutElement

HERE = Path(__file__).resolve().parent
DATA = HERE.parent

LETTER = (8.5, 11.0)  # inch
A4 = (595.0, 842.0)  # pt
_INLINE = re.compile(r"\*\*\*|\*\*|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)|`|\\(?=[\\`*_\[\]()#+.!-])")
_LABELS = {
    "en": {
        "note": "Note",
        "important": "Important",
        "warning": "Warning",
        "tip": "Tip",
        "caution": "Caution",
    },
    "ja": {"note": "注意", "important": "重要", "warning": "警告", "tip": "ヒント", "caution": "注意"},
}


@dataclass
class Printed:
    """One block as printed: its role, text and place in the list structure."""

    role: str  # title, heading, text, item, figure, header, footer, number
    text: str
    level: int = 0  # heading level
    indent: int = 0  # list nesting of the block
    marker: str = ""
    ordered: bool = False
    list_key: str = ""  # the source list the item belongs to
    page: int = 0
    lines: list[str] = field(default_factory=list)
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # fractions: left, top, right, bottom
    line_boxes: list[tuple[float, float, float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Doc:
    name: str
    language: str
    title: str
    footer: str
    blocks: list[Printed]
    page_numbers: list[str]  # printed page number per page, "" = the page's own number


def _plain(text: str) -> str:
    # Markdown hard breaks ("\\" at a line end) print as nothing.
    return " ".join(re.sub(r"\\(?=\s|$)", "", _INLINE.sub("", text)).split())


def _printed(
    elements: list[LayoutElement], language: str, *, first_is_title: bool = True
) -> tuple[list[Printed], list[int]]:
    """Blocks to print, and the indexes where the source itself breaks pages (E-Manual)."""
    depth: dict[str, int] = {}
    out: list[Printed] = []
    breaks: list[int] = []
    for el in elements:
        indent = depth.get(el.parent_id, -1) + 1 if el.parent_id else 0
        if el.kind is ElementKind.FRONT_MATTER:
            continue
        if el.kind is ElementKind.PAGE_FOOTER:  # "- 17 -": the PDF's own page break
            breaks.append(len(out))
            out.append(Printed("number", el.text))
            continue
        if el.kind is ElementKind.SECTION_HEADER:
            role = "title" if first_is_title and el.level == 1 and not out else "heading"
            out.append(Printed(role, _plain(el.text), level=el.level))
        elif el.kind is ElementKind.LIST_ITEM:
            depth[el.element_id] = el.level
            marker = el.number if el.ordered else "•"
            out.append(
                Printed(
                    "item",
                    _plain(el.text),
                    indent=el.level,
                    marker=marker,
                    ordered=el.ordered,
                    list_key=el.list_id or "",
                )
            )
        elif el.kind is ElementKind.PICTURE:
            out.append(Printed("figure", _plain(el.text), indent=indent))
        elif el.kind is ElementKind.CODE:
            code = "\n".join(ln for ln in el.text.splitlines() if not ln.startswith(("```", "~~~")))
            out.append(Printed("text", " ".join(code.split()), indent=indent))
        elif el.text.strip():
            text = _plain(el.text)
            if el.admonition:
                label = _LABELS[language].get(el.admonition, el.admonition.capitalize())
                text = text if text.startswith(label) else f"{label}: {text}"
            out.append(Printed("text", text, indent=indent))
    return out, breaks


def load_docs() -> list[Doc]:
    """The three real documents, as printed blocks."""
    docs = []
    for language in ("en", "ja"):
        path = DATA / "hololens" / language / "hololens-recovery.md"
        elements = list(iter_markdown(path.read_text(encoding="utf-8"), source_id="src"))
        blocks, _ = _printed(elements, language)
        footer = "MicrosoftDocs · hololens/hololens-recovery.md · CC BY 4.0"
        docs.append(Doc(f"hololens-recovery-{language}", language, blocks[0].text, footer, blocks, []))
    path = DATA / "emanual" / "samsung-tv-sections-10-28.txt"
    elements = list(iter_plain_text(path.read_text(encoding="utf-8"), source_id="src"))
    # An excerpt from the middle of the manual: no title, only section headings.
    blocks, _ = _printed(elements, "en", first_is_title=False)
    docs.append(Doc("samsung-tv-sections-10-28", "en", "E-MANUAL", "Samsung TV E-Manual", blocks, []))
    return docs


def _wrap(text: str, width: int) -> list[str]:
    """Break ``text`` into printed lines of at most ``width`` cells (CJK counts two)."""
    lines: list[str] = []
    current = ""
    cells = 0
    i = 0
    while i < len(text):
        if text[i] == " " and not current:
            i += 1
            continue
        # The next unit: a CJK character, or an ASCII word with its trailing space.
        if is_cjk(text[i]):
            unit, size = text[i], 2
        else:
            m = re.match(r"[^ \u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]+ ?", text[i:])
            unit = m.group(0) if m else text[i]
            unit = unit[:width]  # a path longer than the line wraps anywhere, as printers do
            size = len(unit)
        if current and cells + len(unit.rstrip()) * (2 if is_cjk(unit[0]) else 1) > width:
            lines.append(current.rstrip())
            current, cells = "", 0
            continue
        current += unit
        cells += size
        i += len(unit)
    if current.strip():
        lines.append(current.rstrip())
    return lines


@dataclass(frozen=True)
class PageGeometry:
    """Where text goes on a page, as fractions of the page."""

    width: float
    height: float
    unit: str

    @property
    def margin_x(self) -> float:
        return 72 / (self.width * (72 if self.unit == "inch" else 1))

    def pts(self, value: float, *, vertical: bool) -> float:
        """``value`` points as a fraction of the page height (or width)."""
        size = (self.height if vertical else self.width) * (72 if self.unit == "inch" else 1)
        return value / size


def lay_out(doc: Doc, geom: PageGeometry, *, max_pages: int) -> list[list[Printed]]:
    """Place the blocks on pages; return the pages (furniture added), at most ``max_pages``."""
    char_w = geom.pts(5.0, vertical=False)  # 10 pt text: about 5 pt per Latin character
    line_h = geom.pts(13.0, vertical=True)
    top, bottom = geom.pts(72, vertical=True), 1 - geom.pts(72, vertical=True)
    text_width = 1 - 2 * geom.margin_x
    pages: list[list[Printed]] = [[]]
    y = top
    for block in doc.blocks:
        if block.role == "number":  # the source's own page break (E-Manual)
            pages[-1].append(block)
            pages.append([])
            y = top
            continue
        indent = geom.pts(18.0, vertical=False) * (block.indent + (block.role == "item"))
        scale = {"title": 1.8, "heading": 1.4 - 0.1 * block.level}.get(block.role, 1.0)
        width_cells = int((text_width - indent) / (char_w * scale))
        text = f"{block.marker} {block.text}" if block.role == "item" else block.text
        lines = _wrap(text, width_cells) or [""]
        height = len(lines) * line_h * scale
        if block.role == "figure":
            height += geom.pts(120.0, vertical=True)  # the screenshot above its caption
        gap = line_h * (1.2 if block.role in ("title", "heading") else 0.6)
        if y + height > bottom and pages[-1]:
            pages.append([])
            y = top
        left = geom.margin_x + indent - (char_w * 2.4 if block.role == "item" else 0)
        first_line_y = y + (height - len(lines) * line_h * scale)
        block.lines = lines
        block.line_boxes = [
            (
                left,
                first_line_y + k * line_h * scale,
                left + _cells(ln) * char_w * scale,
                first_line_y + (k + 0.8) * line_h * scale,
            )
            for k, ln in enumerate(lines)
        ]
        right = max(b[2] for b in block.line_boxes)
        block.box = (left, y, right, y + height)
        pages[-1].append(block)
        y += height + gap
    pages = [p for p in pages if any(b.role != "number" for b in p)][:max_pages]
    for n, page in enumerate(pages, start=1):
        for block in page:
            block.page = n
        _furniture(doc, geom, page, n)
    return pages


def _cells(line: str) -> int:
    return sum(2 if is_cjk(ch) else 1 for ch in line)


def _furniture(doc: Doc, geom: PageGeometry, page: list[Printed], n: int) -> None:
    """Running header and footer; a page number unless the source printed its own."""
    char_w = geom.pts(4.0, vertical=False)
    head_y, foot_y = geom.pts(36, vertical=True), 1 - geom.pts(48, vertical=True)
    line_h = geom.pts(10.0, vertical=True)

    def block(role: str, text: str, left: float, y: float) -> Printed:
        right = min(left + _cells(text) * char_w, 1 - geom.margin_x / 2)
        box = (left, y, right, y + line_h)
        return Printed(role, text, page=n, lines=[text], box=box, line_boxes=[box])

    printed_number = [b for b in page if b.role == "number"]
    page[:] = [b for b in page if b.role != "number"]
    page.insert(0, block("header", doc.title, geom.margin_x, head_y))
    page.append(block("footer", doc.footer, geom.margin_x, foot_y))
    number = printed_number[0].text if printed_number else str(n)
    page.append(block("number", number, 1 - geom.margin_x - len(number) * char_w, foot_y))


# -- Azure ---------------------------------------------------------------------------------------


def _polygon(box: tuple[float, float, float, float], size: tuple[float, float]) -> list[float]:
    x0, y0, x1, y1 = (round(v * size[i % 2], 4) for i, v in enumerate(box))
    return [x0, y0, x1, y0, x1, y1, x0, y1]


def azure(doc: Doc, pages: list[list[Printed]]) -> dict[str, object]:
    """An analyze-operation result as ``prebuilt-layout`` (API 2024-11-30, text content) returns it."""
    size = LETTER
    content: list[str] = []
    offset = 0
    paragraphs: list[dict[str, object]] = []
    figures: list[dict[str, object]] = []
    page_out: list[dict[str, object]] = []
    sections: list[dict[str, object]] = [{"spans": [], "elements": []}]
    stack: list[tuple[int, int]] = [(0, 0)]  # (heading level, section index)
    roles = {
        "title": "title",
        "heading": "sectionHeading",
        "header": "pageHeader",
        "footer": "pageFooter",
        "number": "pageNumber",
    }

    def put(text: str) -> dict[str, int]:
        nonlocal offset
        span = {"offset": offset, "length": len(text)}
        content.append(text)
        offset += len(text) + 1
        return span

    for n, page in enumerate(pages, start=1):
        page_start = offset
        on_page = 0
        lines_out = []
        for block in page:
            spans = []
            for line, line_box in zip(block.lines, block.line_boxes, strict=True):
                span = put(line)
                spans.append(span)
                lines_out.append({"content": line, "polygon": _polygon(line_box, size), "spans": [span]})
            span = {
                "offset": spans[0]["offset"],
                "length": spans[-1]["offset"] + spans[-1]["length"] - spans[0]["offset"],
            }
            region = [{"pageNumber": n, "polygon": _polygon(block.box, size)}]
            record: dict[str, object] = {"spans": [span], "boundingRegions": region}
            if block.role in roles:
                record["role"] = roles[block.role]
            record["content"] = join_lines(block.lines)
            index = len(paragraphs)
            paragraphs.append(record)
            if block.role == "figure":
                on_page += 1
                image_box = (block.box[0], block.box[1], block.box[0] + 0.45, block.line_boxes[0][1] - 0.005)
                figures.append(
                    {
                        "id": f"{n}.{on_page}",  # page number and index on the page, as the service writes
                        "boundingRegions": [{"pageNumber": n, "polygon": _polygon(image_box, size)}, *region],
                        "spans": [span],
                        "elements": [f"/paragraphs/{index}"],
                        "caption": {
                            "content": record["content"],
                            "boundingRegions": region,
                            "spans": [span],
                            "elements": [f"/paragraphs/{index}"],
                        },
                    }
                )
                sections[stack[-1][1]]["elements"].append(f"/figures/{len(figures) - 1}")
                continue
            if block.role in ("header", "footer", "number"):
                continue
            if block.role == "heading":
                while stack[-1][0] >= block.level:
                    stack.pop()
                sections.append({"spans": [], "elements": []})
                sections[stack[-1][1]]["elements"].append(f"/sections/{len(sections) - 1}")
                stack.append((block.level, len(sections) - 1))
            sections[stack[-1][1]]["elements"].append(f"/paragraphs/{index}")
            for _, sec in stack:
                sections[sec]["spans"].append(span)
        page_out.append(
            {
                "pageNumber": n,
                "angle": 0,
                "width": size[0],
                "height": size[1],
                "unit": "inch",
                "lines": lines_out,
                "spans": [{"offset": page_start, "length": offset - 1 - page_start}],
            }
        )
    return {
        "status": "succeeded",
        "createdDateTime": "2025-01-15T09:30:00Z",
        "lastUpdatedDateTime": "2025-01-15T09:30:04Z",
        "analyzeResult": {
            "apiVersion": "2024-11-30",
            "modelId": "prebuilt-layout",
            "stringIndexType": "utf16CodeUnit",
            "content": "\n".join(content),
            "pages": page_out,
            "paragraphs": paragraphs,
            "tables": [],
            "figures": figures,
            "sections": sections,
            "contentFormat": "text",
        },
    }


# -- Google --------------------------------------------------------------------------------------


def _vertices(box: tuple[float, float, float, float]) -> dict[str, object]:
    x0, y0, x1, y1 = (round(v, 4) for v in box)
    return {
        "normalizedVertices": [{"x": x0, "y": y0}, {"x": x1, "y": y0}, {"x": x1, "y": y1}, {"x": x0, "y": y1}]
    }


def google(doc: Doc, pages: list[list[Printed]]) -> dict[str, object]:
    """A ``Document`` as the layout parser returns it: blocks nested under headings and list entries."""
    counter = iter(range(1, 1_000_000))
    top: list[dict[str, object]] = []
    headings: list[tuple[int, list[dict[str, object]]]] = [(0, top)]
    lists: list[tuple[int, dict[str, object]]] = []  # (indent, listBlock) of open lists
    list_key = ""
    types = {"title": "heading-1", "header": "header", "footer": "footer", "number": "footer"}

    def make(block: Printed, body: dict[str, object], key: str) -> dict[str, object]:
        return {
            "blockId": str(next(counter)),
            key: body,
            "pageSpan": {"pageStart": block.page, "pageEnd": block.page},
            "boundingBox": _vertices(block.box),
        }

    def text_block(block: Printed, kind: str, text: str) -> dict[str, object]:
        return make(block, {"text": text, "type": kind, "blocks": []}, "textBlock")

    for page in pages:
        for block in page:
            container = headings[-1][1]
            text = join_lines(block.lines)
            if block.role == "item":
                text = text[len(block.marker) :].strip()
                if block.list_key != list_key:
                    lists.clear()
                list_key = block.list_key
                del lists[block.indent + 1 :]
                if len(lists) <= block.indent:
                    kind = "ordered" if block.ordered else "unordered"
                    new = {"listEntries": [], "type": kind}
                    target = container if not lists else lists[-1][1]["listEntries"][-1]["blocks"]
                    target.append(make(block, new, "listBlock"))
                    lists.append((block.indent, new))
                entry = {"blocks": [text_block(block, "paragraph", text)]}
                lists[block.indent][1]["listEntries"].append(entry)
                continue
            if block.role in ("text", "figure") and block.indent and lists:
                owner = lists[min(block.indent - 1, len(lists) - 1)][1]["listEntries"][-1]["blocks"]
            else:
                owner = container
                if block.role not in ("header", "footer", "number"):
                    lists.clear()
                    list_key = ""
            if block.role == "figure":
                image = {"mimeType": "image/png", "annotations": {"description": text}}
                owner.append(make(block, image, "imageBlock"))
            elif block.role == "heading":
                while headings[-1][0] >= block.level:
                    headings.pop()
                new_block = text_block(block, f"heading-{block.level}", text)
                headings[-1][1].append(new_block)
                headings.append((block.level, new_block["textBlock"]["blocks"]))
            elif block.role == "title":
                new_block = text_block(block, "heading-1", text)
                top.append(new_block)
                headings.append((1, new_block["textBlock"]["blocks"]))
            else:
                owner.append(text_block(block, types.get(block.role, "paragraph"), text))
    dimension = {"width": A4[0], "height": A4[1], "unit": "points"}
    return {
        "document": {
            "mimeType": "application/pdf",
            "documentLayout": {"blocks": top},
            "pages": [{"pageNumber": n, "dimension": dimension} for n in range(1, len(pages) + 1)],
        }
    }


# -- Textract ------------------------------------------------------------------------------------


def textract(doc: Doc, pages: list[list[Printed]]) -> dict[str, object]:
    """An ``AnalyzeDocument`` response (``FeatureTypes=["LAYOUT"]``): PAGE, LINE, WORD and LAYOUT blocks."""
    ids = iter(uuid.uuid5(uuid.NAMESPACE_URL, f"textract/{doc.name}/{n}") for n in range(1, 10**7))
    blocks: list[dict[str, object]] = []

    def geometry(box: tuple[float, float, float, float]) -> dict[str, object]:
        x0, y0, x1, y1 = (round(v, 4) for v in box)
        return {
            "BoundingBox": {"Width": round(x1 - x0, 4), "Height": round(y1 - y0, 4), "Left": x0, "Top": y0},
            "Polygon": [{"X": x0, "Y": y0}, {"X": x1, "Y": y0}, {"X": x1, "Y": y1}, {"X": x0, "Y": y1}],
        }

    def lines_of(block: Printed, page: int, lines: list[str]) -> list[str]:
        out = []
        for line, box in zip(lines, block.line_boxes, strict=True):
            words = line.split()
            line_id = str(next(ids))
            word_blocks = []
            x = box[0]
            width = (box[2] - box[0]) / max(len(line), 1)
            for word in words:
                start = line.index(word, round((x - box[0]) / width) if width else 0)
                wbox = (box[0] + start * width, box[1], box[0] + (start + len(word)) * width, box[3])
                x = wbox[2]
                word_blocks.append(
                    {
                        "BlockType": "WORD",
                        "Confidence": 99.1,
                        "Text": word,
                        "TextType": "PRINTED",
                        "Geometry": geometry(wbox),
                        "Id": str(next(ids)),
                        "Page": page,
                    }
                )
            blocks.append(
                {
                    "BlockType": "LINE",
                    "Confidence": 99.4,
                    "Text": line,
                    "Geometry": geometry(box),
                    "Id": line_id,
                    "Relationships": [{"Type": "CHILD", "Ids": [w["Id"] for w in word_blocks]}],
                    "Page": page,
                }
            )
            blocks.extend(word_blocks)
            out.append(line_id)
        return out

    types = {
        "title": "LAYOUT_TITLE",
        "heading": "LAYOUT_SECTION_HEADER",
        "header": "LAYOUT_HEADER",
        "footer": "LAYOUT_FOOTER",
        "number": "LAYOUT_PAGE_NUMBER",
        "figure": "LAYOUT_FIGURE",
        "text": "LAYOUT_TEXT",
        "item": "LAYOUT_TEXT",
    }
    for n, page in enumerate(pages, start=1):
        page_block: dict[str, object] = {
            "BlockType": "PAGE",
            "Geometry": geometry((0, 0, 1, 1)),
            "Id": str(next(ids)),
            "Relationships": [{"Type": "CHILD", "Ids": []}],
            "Page": n,
        }
        blocks.append(page_block)
        layout: list[dict[str, object]] = []
        open_list: dict[str, object] | None = None
        for block in page:
            lines = list(block.lines)
            if block.role == "item" and not block.ordered:  # Textract drops the bullet glyph
                lines[0] = lines[0].removeprefix("•").lstrip()
            kind = types[block.role]
            if block.role == "figure":  # the screenshot has no text; its caption is a text block below it
                image_box = (block.box[0], block.box[1], block.box[0] + 0.45, block.line_boxes[0][1] - 0.005)
                layout.append(
                    {
                        "BlockType": kind,
                        "Confidence": 88.0,
                        "Geometry": geometry(image_box),
                        "Id": str(next(ids)),
                        "Page": n,
                    }
                )
                kind = "LAYOUT_TEXT"
            record = {
                "BlockType": kind,
                "Confidence": 91.5,
                "Geometry": geometry(block.box),
                "Id": str(next(ids)),
                "Relationships": [{"Type": "CHILD", "Ids": lines_of(block, n, lines)}],
                "Page": n,
            }
            if block.role == "item":
                if open_list is None:
                    open_list = {
                        "BlockType": "LAYOUT_LIST",
                        "Confidence": 90.2,
                        "Id": str(next(ids)),
                        "Relationships": [{"Type": "CHILD", "Ids": []}],
                        "Page": n,
                        "_boxes": [],
                    }
                    layout.append(open_list)
                open_list["Relationships"][0]["Ids"].append(record["Id"])
                open_list["_boxes"].append(block.box)
                layout.append(record)  # the items follow their list, as Textract returns them
                continue
            if block.role not in ("header", "footer", "number"):
                open_list = None
            layout.append(record)
        for record in layout:
            boxes = record.pop("_boxes", None)
            if boxes:
                record["Geometry"] = geometry(
                    (
                        min(b[0] for b in boxes),
                        min(b[1] for b in boxes),
                        max(b[2] for b in boxes),
                        max(b[3] for b in boxes),
                    )
                )
        line_ids = [b["Id"] for b in blocks if b["BlockType"] == "LINE" and b["Page"] == n]
        page_block["Relationships"][0]["Ids"] = [*line_ids, *(r["Id"] for r in layout)]
        blocks.extend(layout)
    return {"DocumentMetadata": {"Pages": len(pages)}, "Blocks": blocks, "AnalyzeDocumentModelVersion": "1.0"}


# -- main ----------------------------------------------------------------------------------------

#: (service, document) -> file name. Textract reads no Japanese, so it gets the E-Manual instead.
PLAN = {
    ("azure", "hololens-recovery-en"): "azure/hololens-recovery-en.json",
    ("azure", "hololens-recovery-ja"): "azure/hololens-recovery-ja.json",
    ("google", "hololens-recovery-en"): "google/hololens-recovery-en.json",
    ("google", "hololens-recovery-ja"): "google/hololens-recovery-ja.json",
    ("textract", "hololens-recovery-en"): "textract/hololens-recovery-en.json",
    ("textract", "samsung-tv-sections-10-28"): "textract/samsung-tv-sections-10-28.json",
}
#: The whole HoloLens article (7 pages) for Azure and Google; Textract's WORD blocks make pages
#: five times heavier, so it gets the first three.
MAX_PAGES = {"azure": 7, "google": 7, "textract": 3}


def build() -> dict[str, str]:
    """Every fixture's file name and JSON text."""
    writers = {
        "azure": (azure, PageGeometry(*LETTER, "inch")),
        "google": (google, PageGeometry(*A4, "pt")),
        "textract": (textract, PageGeometry(*A4, "pt")),
    }
    out = {}
    for (service, name), file in PLAN.items():
        doc = next(d for d in load_docs() if d.name == name)
        write, geom = writers[service]
        pages = lay_out(doc, geom, max_pages=MAX_PAGES[service])
        # Textract's many WORD blocks are written compact, to keep the files small.
        indent = None if service == "textract" else 1
        out[file] = json.dumps(write(doc, pages), ensure_ascii=False, indent=indent) + "\n"
    return out


def main(argv: list[str]) -> int:
    fixtures = build()
    if "--check" in argv:
        stale = [f for f, text in fixtures.items() if (HERE / f).read_text(encoding="utf-8") != text]
        print("stale:", stale if stale else "none")  # noqa: T201 - a command-line tool
        return 1 if stale else 0
    for file, text in fixtures.items():
        (HERE / file).parent.mkdir(parents=True, exist_ok=True)
        (HERE / file).write_text(text, encoding="utf-8")
        print(f"wrote {file} ({len(text) // 1024} KiB)")  # noqa: T201 - a command-line tool
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
