"""Write the PDF fixtures of tests/data/pdf/ from real text in tests/data (see SOURCES.md).

Not run by the tests: the PDFs are committed, so nothing needs fpdf2 or the font at
test time. To rewrite them, run this file with a Python that has fpdf2 and
procedure-rag importable, and the IPA Gothic font (Debian ``fonts-ipafont-gothic``):

    python tests/data/pdf/make_pdfs.py

* ``samsung-tv-17-19.pdf``: the E-Manual TV excerpt's printed pages 17 to 19, one PDF
  page each, line for line as the dataset extracted them, section titles in bold and
  the page number ``- 17 -`` as the page footer.
* ``hololens-recovery-ja.pdf``: the HoloLens ja recovery page from its title through
  "デバイスをリセットする", laid out as a printed manual: headings, numbered and bulleted
  lists with their markers, notes with their label (``重要:``, ``注意:``), a frame and
  caption for each screenshot, and ``- n -`` footers.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

from procedure_rag._readers.markdown import read_markdown
from procedure_rag._types import ElementKind

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
FONT = Path("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf")
FIXED_DATE = datetime(2021, 10, 19, tzinfo=UTC)  # reproducible output
JA_LABELS = {"note": "注意", "important": "重要", "warning": "警告", "tip": "ヒント"}
JA_LAST_SECTION = "デバイスをリセットする"


class _Manual(FPDF):
    def __init__(self, font: str) -> None:
        super().__init__(format="A4", unit="pt")
        self.font_name = font
        self.footers: dict[int, str] = {}  # page number -> printed footer, when not "- n -"
        self.set_margins(56, 56, 56)
        self.set_auto_page_break(auto=True, margin=72)
        self.set_creation_date(FIXED_DATE)

    def footer(self) -> None:
        self.set_y(-48)
        self.set_font(self.font_name, size=9)
        self.cell(0, 12, self.footers.get(self.page_no(), f"- {self.page_no()} -"), align="C")


def samsung_tv() -> None:
    text = (DATA / "emanual/samsung-tv-sections-10-28.txt").read_text(encoding="utf-8")
    index = (DATA / "emanual/samsung-tv-sections-10-28.sections.jsonl").read_text(encoding="utf-8")
    titles = {json.loads(row)["start"] for row in index.splitlines()}
    pdf = _Manual("Helvetica")
    pdf.set_title("Samsung TV E-Manual (excerpt)")
    offset = 0
    for printed in (17, 18, 19):
        footer = f"- {printed} -"
        end = text.index(f"\n{footer}\n", offset)
        pdf.add_page()
        pdf.footers[pdf.page_no()] = footer
        for line in text[offset:end].split("\n"):
            is_title = offset in titles
            offset += len(line) + 1
            if not line:
                pdf.ln(8)
                continue
            pdf.set_font("Helvetica", style="B" if is_title else "", size=13 if is_title else 9.5)
            pdf.cell(0, 18 if is_title else 12.5, line, new_x="LMARGIN", new_y="NEXT")
        offset = end + len(footer) + 2
    pdf.output(str(HERE / "samsung-tv-17-19.pdf"))


def _plain(markdown_text: str) -> str:
    text = re.sub(r"\*+", "", markdown_text)
    return re.sub(r"\\(?=[\s\W]|$)", "", text).strip()


def hololens_ja() -> None:
    source = (DATA / "hololens/ja/hololens-recovery.md").read_text(encoding="utf-8")
    pdf = _Manual("IPAGothic")
    pdf.add_font("IPAGothic", fname=str(FONT))
    pdf.set_title("HoloLens 2 を再起動、リセット、または回復する")
    pdf.add_page()
    depth_of: dict[str, int] = {}
    stop = False
    for el in read_markdown(source, source_id="ja"):
        text = _plain(el.text)
        if el.kind is ElementKind.SECTION_HEADER:
            if stop:
                break
            stop = text == JA_LAST_SECTION  # print that section, then end at the next heading
            size = {1: 16, 2: 13}.get(el.level, 11.5)
            pdf.ln(6)
            pdf.set_font("IPAGothic", size=size)
            pdf.multi_cell(0, size + 6, text, align="L", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
            continue
        if el.kind is ElementKind.FRONT_MATTER or not text:
            continue
        depth = el.level if el.kind is ElementKind.LIST_ITEM else depth_of.get(el.parent_id or "", -1) + 1
        depth_of[el.element_id] = depth
        indent = 18.0 * depth
        pdf.set_font("IPAGothic", size=9.5)
        pdf.set_x(pdf.l_margin + indent)
        if el.kind is ElementKind.LIST_ITEM:
            marker = el.number if el.ordered else "・"
            pdf.cell(18, 14, marker)
            pdf.multi_cell(0, 14, text, align="L", new_x="LMARGIN", new_y="NEXT")
        elif el.kind is ElementKind.PICTURE:
            width = pdf.epw - indent - 18
            if pdf.will_page_break(110):
                pdf.add_page()
            y = pdf.get_y() + 4
            pdf.rect(pdf.l_margin + indent + 18, y, width, 80)
            pdf.set_y(y + 84)
            pdf.set_x(pdf.l_margin + indent + 18)
            pdf.set_font("IPAGothic", size=8.5)
            pdf.multi_cell(0, 12, f"図: {text}", align="L", new_x="LMARGIN", new_y="NEXT")
        else:
            if el.admonition:
                text = f"{JA_LABELS[el.admonition]}: {text}"
            pdf.multi_cell(0, 14, text, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    pdf.output(str(HERE / "hololens-recovery-ja.pdf"))


if __name__ == "__main__":
    samsung_tv()
    hololens_ja()
