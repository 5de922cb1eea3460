"""Write the pandoc-made Word fixtures of tests/data/docx/ from HoloLens pages in tests/data (see SOURCES.md).

Not run by the tests: the .docx files are committed, so CI needs no pandoc. To rewrite
them, run this file with pandoc 2.17 on the PATH (Debian: ``apt-get install pandoc``):

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


if __name__ == "__main__":
    for fixture, source in PAGES.items():
        make(fixture, source)
