"""Write the Word fixtures of tests/data/docx/: pandoc's from HoloLens pages, LibreOffice's from formatted/.

Not run by the tests: the .docx files are committed, so CI needs neither pandoc nor
LibreOffice. To rewrite them, run this file with pandoc 2.17 and LibreOffice on the PATH
(Debian: ``apt-get install pandoc libreoffice-writer-nogui``):

    python tests/data/docx/make_docx.py

For each page the Markdown is changed in two ways before pandoc reads it, and in no
other: the YAML front matter is dropped (it is metadata, which pandoc would print as a
title and an author), and each GitHub alert ``> [!NOTE]`` becomes ``> **Note:**``, the
label a Word manual prints (pandoc would keep ``[!NOTE]`` as text). Each picture the
page links to is given as a 1x1 PNG, so that pandoc embeds a picture with the alt text
instead of printing the alt text. The command, per page::

    pandoc --from gfm --to docx --resource-path <dir of 1x1 PNGs> --output <name>.docx

with ``SOURCE_DATE_EPOCH=0`` so that the output does not change from run to run.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
#: fixture name -> the page it is made from (relative to tests/data).
PAGES = {
    "hololens-provisioning-en.docx": "hololens/en/hololens-provisioning.md",
    "hololens-provisioning-ja.docx": "hololens/ja/hololens-provisioning.md",
    "hololens-recovery-en.docx": "hololens/en/hololens-recovery.md",
    # Read through docx2txt, which drops Word's list numbers: an admin guide of our own
    # writing in both languages (tests/data/written/) and a Japanese-native manual's page.
    "backup-console-en.docx": "written/backup-console-en.md",
    "backup-console-ja.docx": "written/backup-console-ja.md",
    "growi-group-ja.docx": "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
}
PANDOC = ("pandoc", "--from", "gfm", "--to", "docx")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_ALERT = re.compile(r"^(\s*>\s*)\[!([A-Za-z]+)\]", re.MULTILINE)
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def prepared(markdown: str) -> str:
    """The page as pandoc reads it: front matter dropped, alerts written as labels."""
    body = _FRONT_MATTER.sub("", markdown, count=1)
    return _ALERT.sub(lambda m: f"{m.group(1)}**{m.group(2).capitalize()}:**", body)


def make(name: str, page: str) -> None:
    markdown = prepared((DATA / page).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        for link in _IMAGE.findall(markdown):
            if "://" not in link:
                target = Path(tmp, link)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_PNG)
        command = [*PANDOC, "--resource-path", tmp, "--output", str(HERE / name)]
        env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
        subprocess.run(command, input=markdown, text=True, check=True, env=env)  # noqa: S603 - fixed command


#: Word files whose headings are formatted by hand (bold, larger) or styled, written by
#: LibreOffice from HTML pages of our own writing in formatted/ (see SOURCES.md).
FORMATTED = ("ja-fileserver-runbook.html", "en-vpn-gateway-guide.html", "en-styled-guide.html")
SOFFICE = ("soffice", "--headless", "--convert-to", "docx:MS Word 2007 XML")


def make_formatted(page: str) -> None:
    """LibreOffice's Word file of an HTML page: a ``<p>`` in bold or a larger size is direct formatting."""
    folder = HERE / "formatted"
    command = [*SOFFICE, "--outdir", str(folder), str(folder / page)]
    subprocess.run(command, check=True, capture_output=True)  # noqa: S603 - fixed command


if __name__ == "__main__":
    for fixture, source in PAGES.items():
        make(fixture, source)
    for page in FORMATTED:
        make_formatted(page)
