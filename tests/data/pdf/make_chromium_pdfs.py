"""Write the Chromium-printed PDF fixtures of tests/data/pdf/ from the HoloLens pages.

Not run by the tests: the PDFs are committed. To rewrite them you need pandoc and
Debian's Chromium (and ``fonts-ipafont-gothic`` for the Japanese page):

    python tests/data/pdf/make_chromium_pdfs.py

Each HoloLens recovery page (tests/data/hololens/{en,ja}/hololens-recovery.md, CC BY 4.0,
see tests/data/hololens/LICENSE) goes through pandoc to HTML and through Chromium's
print-to-PDF, as a user saving a help page as PDF would:

* ``hololens-recovery-en.chromium.pdf``: tagged, with the document outline Chromium
  makes from the headings (``--generate-pdf-document-outline``), and Chromium's own
  running header (date, title) and footer (file URL, ``n/N``) on every page.
* ``hololens-recovery-ja.chromium.pdf``: the same for the Japanese page.

* ``hololens-recovery-en.libreoffice.pdf``: ``tests/data/docx/hololens-recovery-en.docx``
  (the Word fixture pandoc made, see ``tests/data/docx/make_docx.py``) exported by
  LibreOffice Writer (Debian ``libreoffice-writer-nogui``) as a tagged PDF with bookmarks,
  as Word's "Save as PDF" writes them: paragraphs that go on over a page break.

* ``hololens-recovery-en.ruled.pdf``: the English page printed with its headings at body size
  and weight, each with a border under it (as some sites style ``h3``/``h4``), then stripped
  of its tags and outline with pypdf, as older browsers and many converters write PDFs: only
  the rule under a heading tells it from body text.

* ``hololens-network-en.chromium.pdf``, ``hololens-kiosk-reference-{en,ja}.chromium.pdf``:
  the English network page and the kiosk reference pages (tests/data/hololens/) printed as
  the recovery pages are; written alone by ``python tests/data/pdf/make_chromium_pdfs.py
  pages``. The network page's title-case section titles come right after a list and a
  paragraph, which page text (pypdf's) shows as lines like any other; the kiosk reference
  ends its sections with a "Back to list" / 「一覧に戻る」 link.

The pages' ``> [!NOTE]`` blocks are written as ``**Note:**`` paragraphs first (pandoc
does not know that syntax).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGES = HERE.parent / "hololens"
KINDS = ("NOTE", "IMPORTANT", "WARNING", "TIP", "CAUTION")
LABELS = {
    "en": dict(zip(KINDS, ("Note", "Important", "Warning", "Tip", "Caution"), strict=True)),
    "ja": dict(zip(KINDS, ("注意", "重要", "警告", "ヒント", "注意"), strict=True)),
}
CSS = "body { font-family: 'IPAGothic', 'Liberation Serif', serif; max-width: 40em; margin: auto; }"


def tool(name: str) -> str:
    """The full path of a program on PATH."""
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"needs {name} on PATH")
    return path


def markdown(lang: str, page: str = "hololens-recovery.md") -> str:
    text = (PAGES / lang / page).read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    labels = LABELS[lang]

    def label(m: re.Match[str]) -> str:
        return f"> **{labels.get(m.group(1).upper(), m.group(1))}:** "

    return re.sub(r"^>\s*\[!(\w+)\]\s*\n>\s*", label, text, flags=re.MULTILINE)


def print_page(work: Path, lang: str, page: str, title: str, out: Path) -> None:
    """``page`` of ``lang`` through pandoc to HTML, then Chromium's print-to-PDF (outline kept) to ``out``."""
    stem = page.removesuffix(".md")
    md = work / f"{stem}-{lang}.md"
    md.write_text(markdown(lang, page), encoding="utf-8")
    css = work / "page.css"
    css.write_text(CSS, encoding="utf-8")
    html = work / f"{stem}-{lang}.html"
    subprocess.run(  # noqa: S603 - fixed command
        [tool("pandoc"), "-s", "-f", "gfm", "-t", "html5", str(md), "-o", str(html),
         "--css", str(css), "--metadata", f"title={title}", "--metadata", f"lang={lang}"],
        check=True,
    )  # fmt: skip
    chromium_pdf(html, out)


def chromium_pdf(html: Path, out: Path) -> None:
    """Chromium's print of ``html`` to ``out``, with the document outline (tags come by default)."""
    subprocess.run(  # noqa: S603 - fixed command
        [tool("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
         "--generate-pdf-document-outline", f"--print-to-pdf={out}", html.as_uri()],
        check=True, capture_output=True,
    )  # fmt: skip
    print(out, out.stat().st_size)  # noqa: T201 - a script's report


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("en", "ja"):
            title = "HoloLens 2 recovery" if lang == "en" else "HoloLens 2 の回復"
            out = HERE / f"hololens-recovery-{lang}.chromium.pdf"
            print_page(Path(tmp), lang, "hololens-recovery.md", title, out)
        libreoffice(Path(tmp))
        ruled(Path(tmp))


#: The other pages printed as the recovery pages are: (language, page, title).
OTHER_PAGES = (
    ("en", "hololens-network.md", "HoloLens network"),
    ("en", "hololens-kiosk-reference.md", "HoloLens kiosk reference"),
    ("ja", "hololens-kiosk-reference.md", "HoloLens キオスク リファレンス"),
)


def pages() -> None:
    """Print :data:`OTHER_PAGES` as the recovery pages are printed."""
    with tempfile.TemporaryDirectory() as tmp:
        for lang, page, title in OTHER_PAGES:
            out = HERE / f"{page.removesuffix('.md')}-{lang}.chromium.pdf"
            print_page(Path(tmp), lang, page, title, out)


RULED_CSS = CSS + " h1, h2, h3 { font-size: 1em; font-weight: normal; border-bottom: 1px solid #888; }"


def ruled(work: Path) -> None:
    """Print the English page with body-size headings underlined, then drop its tags and outline."""
    from pypdf import PdfReader, PdfWriter  # noqa: PLC0415 - only this fixture needs it

    md = work / "hololens-recovery-en.md"  # as print_page wrote it
    css = work / "ruled.css"
    css.write_text(RULED_CSS, encoding="utf-8")
    html = work / "ruled-en.html"
    subprocess.run(  # noqa: S603 - fixed command
        [tool("pandoc"), "-s", "-f", "gfm", "-t", "html5", str(md), "-o", str(html),
         "--css", str(css), "--metadata", "title=HoloLens 2 recovery", "--metadata", "lang=en"],
        check=True,
    )  # fmt: skip
    printed = work / "ruled-en.pdf"
    subprocess.run(  # noqa: S603 - fixed command
        [tool("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
         f"--print-to-pdf={printed}", html.as_uri()],
        check=True, capture_output=True,
    )  # fmt: skip
    writer = PdfWriter(clone_from=PdfReader(printed))
    for key in ("/StructTreeRoot", "/MarkInfo", "/Outlines", "/PageMode"):
        writer._root_object.pop(key, None)
    for page in writer.pages:
        page.pop("/StructParents", None)
    out = HERE / "hololens-recovery-en.ruled.pdf"
    with out.open("wb") as f:
        writer.write(f)
    print(out, out.stat().st_size)  # noqa: T201 - a script's report


def libreoffice(work: Path) -> None:
    """Export the Word fixture as a tagged PDF with bookmarks."""
    options = {
        "UseTaggedPDF": {"type": "boolean", "value": "true"},
        "ExportBookmarks": {"type": "boolean", "value": "true"},
    }
    docx = HERE.parent / "docx" / "hololens-recovery-en.docx"
    subprocess.run(  # noqa: S603 - fixed command
        [tool("soffice"), f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
         "--convert-to", f"pdf:writer_pdf_Export:{json.dumps(options)}", "--outdir", str(work), str(docx)],
        check=True, capture_output=True,
    )  # fmt: skip
    out = HERE / "hololens-recovery-en.libreoffice.pdf"
    shutil.move(work / "hololens-recovery-en.pdf", out)
    print(out, out.stat().st_size)  # noqa: T201 - a script's report


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["pages"]:
        pages()
    else:
        main()
