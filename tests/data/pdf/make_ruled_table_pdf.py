"""Write ``hololens-provisioning-ja.table{,.tagged}.libreoffice.pdf``: a ruled table LibreOffice draws.

Not run by the tests: the PDF is committed. To rewrite it you need LibreOffice Writer
(Debian ``libreoffice-writer-nogui``) and ``fonts-ipafont-gothic``:

    python tests/data/pdf/make_ruled_table_pdf.py

Two sections of the Japanese HoloLens provisioning page (``hololens/ja/hololens-provisioning.md``,
CC BY 4.0, see tests/data/hololens/LICENSE) as an HTML page: the note in a bordered box (one
cell: no table), the steps, and the settings table with a border round every cell. LibreOffice
Writer opens the page and exports it as PDF with its default settings: no tags, so only the
ruling lines tell the table (text only, Markdown markup and links removed). The ``.tagged``
variant is the same export with tags (``UseTaggedPDF``): its tag tree declares the table.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "hololens" / "ja" / "hololens-provisioning.md"
OUT = HERE / "hololens-provisioning-ja.table.libreoffice.pdf"
TAGGED = HERE / "hololens-provisioning-ja.table.tagged.libreoffice.pdf"


def _plain(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return escape(text.replace("**", "").strip())


def page() -> str:
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if "applyremove-a-provisioning-package" in ln)
    end = next(i for i, ln in enumerate(lines) if "app-install-via-provisioning-package" in ln)
    out = ['<html><head><meta charset="utf-8"><style>body { font-family: "IPAGothic"; }</style></head><body>']
    items: list[str] = []
    rows: list[list[str]] = []

    def close() -> None:
        if items:
            out.append("<ol>" + "".join(f"<li>{i}</li>" for i in items) + "</ol>")
            items.clear()
        if rows:
            cells = ["".join(f"<td>{c}</td>" for c in row) for row in rows]
            out.append('<table border="1" cellspacing="0" cellpadding="4"><tr>' + "</tr><tr>".join(cells))
            out.append("</tr></table>")
            rows.clear()

    for line in lines[start:end]:
        if line.startswith("## "):
            close()
            out.append(f"<h2>{_plain(line[3:])}</h2>")
        elif line.startswith("> [!NOTE]"):
            continue
        elif line.startswith("> "):
            out.append(f'<p style="border: 1px solid #000; padding: 4pt">注意: {_plain(line[2:])}</p>')
        elif m := re.match(r"^\d+\.\s+(.*)", line):
            items.append(_plain(m.group(1)))
        elif line.startswith("|"):
            if not line.startswith("| ---"):
                rows.append([_plain(c) for c in line.strip("|").split("|")])
        elif line.strip() and not line.startswith("!["):
            close()
            out.append(f"<p>{_plain(line)}</p>")
    close()
    out.append("</body></html>")
    return "\n".join(out)


def main() -> None:
    tags = '{"UseTaggedPDF":{"type":"boolean","value":"true"}}'
    for out, export in ((OUT, "pdf"), (TAGGED, f"pdf:writer_pdf_Export:{tags}")):
        with tempfile.TemporaryDirectory() as tmp:
            html = Path(tmp) / (out.stem + ".html")
            html.write_text(page(), encoding="utf-8")
            command = ["soffice", "--headless", "--infilter=HTML (StarWriter)", "--convert-to", export]
            subprocess.run(  # noqa: S603 - fixed command
                [*command, "--outdir", tmp, html],
                check=True,
                capture_output=True,
            )
            shutil.copyfile(html.with_suffix(".pdf"), out)
        print(f"wrote {out}")  # noqa: T201 - a script's report


if __name__ == "__main__":
    main()
