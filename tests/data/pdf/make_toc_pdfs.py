"""Write the PDF fixtures of tests/data/pdf/ that open with a table of contents.

Not run by the tests: the PDFs are committed. From the HoloLens provisioning page
(tests/data/hololens/{en,ja}/hololens-provisioning.md, CC BY 4.0, see
tests/data/hololens/LICENSE), as its authors' tools would print it:

* ``hololens-provisioning-ja.toc.libreoffice.pdf``: pandoc makes a Word file with a
  table of contents titled 「目次」 (``--toc``); LibreOffice Writer opens it, updates the
  table (pandoc leaves it empty for Word to fill) and exports the PDF: entries with
  dotted leaders and page numbers.
* ``hololens-provisioning-en.toc.chromium.pdf``: pandoc makes HTML with numbered
  sections and a "Contents" list of them (``--toc --number-sections``); Chromium prints
  it, with its running header and footer.

Needs pandoc, Debian's Chromium and ``libreoffice-writer-nogui``, and the Python that
Debian's ``python3-uno`` is installed for (``/usr/bin/python3``; LibreOffice is driven
through UNO to update the table):

    /usr/bin/python3 tests/data/pdf/make_toc_pdfs.py
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_chromium_pdfs import CSS, chromium_pdf, tool  # the sibling script: run from this folder

HERE = Path(__file__).resolve().parent
PAGES = HERE.parent / "hololens"
PAGE = "hololens-provisioning.md"
TITLE = "Configure HoloLens using a provisioning package"


def markdown(lang: str) -> str:
    """The page without its front matter, its alerts as bold labels (pandoc does not know them)."""
    text = (PAGES / lang / PAGE).read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    return re.sub(r"^>\s*\[!(\w+)\]\s*\n>\s*", lambda m: f"> **{m.group(1).title()}:** ", text, flags=re.M)


def libreoffice_with_toc(work: Path) -> None:
    """The Japanese page as Word with a 目次, its table updated and exported by LibreOffice."""
    md = work / "provisioning-ja.md"
    md.write_text(markdown("ja"), encoding="utf-8")
    docx = work / "provisioning-ja.docx"
    subprocess.run(  # noqa: S603 - fixed command
        [tool("pandoc"), "-s", "-f", "gfm", "-t", "docx", "--toc", "--metadata", "toc-title=目次",
         "--metadata", "lang=ja", str(md), "-o", str(docx)],
        check=True,
    )  # fmt: skip
    out = HERE / "hololens-provisioning-ja.toc.libreoffice.pdf"
    _export_with_indexes(docx, out, work / "profile")
    print(out, out.stat().st_size)  # noqa: T201 - a script's report


def _export_with_indexes(source: Path, out: Path, profile: Path) -> None:
    import uno  # type: ignore[import-not-found]  # noqa: PLC0415 - Debian's python3-uno
    from com.sun.star.beans import PropertyValue  # type: ignore[import-not-found]  # noqa: PLC0415

    def prop(name: str, value: object) -> object:
        p = PropertyValue()
        p.Name, p.Value = name, value
        return p

    office = subprocess.Popen(  # noqa: S603 - fixed command
        [tool("soffice"), f"-env:UserInstallation={profile.as_uri()}", "--headless", "--invisible",
         "--accept=pipe,name=procedure_rag_toc;urp;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    try:
        for _ in range(60):
            try:
                ctx = resolver.resolve("uno:pipe,name=procedure_rag_toc;urp;StarOffice.ComponentContext")
                break
            except Exception:  # LibreOffice is not listening yet
                time.sleep(1)
        else:
            raise SystemExit("LibreOffice did not start")
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        doc = desktop.loadComponentFromURL(source.as_uri(), "_blank", 0, (prop("Hidden", True),))
        indexes = doc.getDocumentIndexes()
        for i in range(indexes.getCount()):
            indexes.getByIndex(i).update()
        doc.storeToURL(out.as_uri(), (prop("FilterName", "writer_pdf_Export"),))
        doc.close(True)
        desktop.terminate()
    finally:
        office.wait(timeout=60)


def chromium_with_toc(work: Path) -> None:
    """The English page as HTML with numbered sections and their contents list, printed by Chromium."""
    md = work / "provisioning-en.md"
    md.write_text(markdown("en"), encoding="utf-8")
    html = work / "provisioning-en.html"
    css = work / "page.css"
    css.write_text(CSS, encoding="utf-8")
    subprocess.run(  # noqa: S603 - fixed command
        [tool("pandoc"), "-s", "-f", "gfm", "-t", "html5", "--toc", "--number-sections",
         "--metadata", "toc-title=Contents", "--metadata", f"title={TITLE}",
         "--metadata", "lang=en", "--css", str(css), str(md), "-o", str(html)],
        check=True,
    )  # fmt: skip
    chromium_pdf(html, HERE / "hololens-provisioning-en.toc.chromium.pdf")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        chromium_with_toc(Path(tmp))
        libreoffice_with_toc(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
