"""PDFs and Word files whose structure is known: the shared HoloLens pages printed and converted.

Each Markdown page of ``../shared/data/hololens/{en,ja}/`` becomes:

- ``chromium-pdf``: HTML made by pandoc (GFM, no smart typography), printed by Debian's
  Chromium headless with ``--generate-pdf-document-outline``. Chromium's PDFs are tagged,
  the outline is the page's headings, and every page carries the browser's running header
  (date and page title) and footer (the page's URL and ``n/N``), as a page printed from a
  browser does.
- ``pandoc-docx``: a Word file made by pandoc (headings as ``Heading N`` styles, lists with
  Word's own numbering), from a reference document that adds a running header (a guide
  title) and a page-number footer (``- N -`` in Japanese, ``Page N`` in English), as
  company manuals have.
- ``libreoffice-pdf``: that Word file exported by LibreOffice headless as a tagged PDF with
  bookmarks (``UseTaggedPDF``, ``ExportBookmarks``): outline, tags and a running header
  and footer on every page.
- ``impress-pdf``: a slide deck, as a PDF a presentation program writes (its ``Creator`` is
  ``Impress``): pandoc makes a PowerPoint file of the page (``--slide-level=3``: the page's
  ``#`` and ``##`` headings are section slides, each ``###`` a slide, the page title the
  title slide's), which LibreOffice Impress exports as PDF. pandoc does not cut a slide
  whose text runs past its bottom: such text goes on below the slide, where PDF text
  extraction still finds it.

Pictures are left out (the shared pages come without their image files); a GitHub alert
(``> [!NOTE]``) is printed with the label Microsoft Learn shows (Note / 注意 ...). The
front matter is dropped and its ``title`` becomes the HTML page title.

Files go to ``benchmarks/.cache/made-docs/{variant}/{lang}/{page}.{pdf,docx}`` (gitignored),
with ``MANIFEST.json`` naming the tools, their versions and each source's sha256; a file is
made again only when its source, the recipe or the tool changed. ``benchmarks/retrieval.py
--made ...`` calls :func:`ensure` itself, so this script is only needed to make them ahead:

    python benchmarks/make_pdfs.py [--variants chromium-pdf libreoffice-pdf pandoc-docx] [--langs en ja]

Needs ``pandoc`` and ``chromium`` (Debian packages), and ``soffice`` from Debian's
``libreoffice-writer-nogui`` for ``libreoffice-pdf`` and ``libreoffice-impress-nogui`` for
``impress-pdf``. Licence of the pages: CC BY 4.0,
© Microsoft (``../shared/data/hololens/LICENSE``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / ".cache" / "made-docs"
DEFAULT_PAGES = HERE.parents[1] / "shared" / "data" / "hololens"
#: Bump when the way a file is made changes: every file is made again.
RECIPE = 1
VARIANTS = ("chromium-pdf", "libreoffice-pdf", "pandoc-docx", "impress-pdf")
SUFFIX = {"chromium-pdf": ".pdf", "libreoffice-pdf": ".pdf", "pandoc-docx": ".docx", "impress-pdf": ".pdf"}
LANGS = ("en", "ja")
#: The Debian package with the LibreOffice part a variant needs.
_OFFICE_PACKAGES = {"libreoffice-pdf": "libreoffice-writer-nogui", "impress-pdf": "libreoffice-impress-nogui"}
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)
_TIMEOUT = 180

#: The labels Microsoft Learn prints for GitHub alerts, per language.
_LUA_FILTER = r"""
local labels = {
  en = {NOTE = "Note", IMPORTANT = "Important", TIP = "Tip", CAUTION = "Caution", WARNING = "Warning"},
  ja = {NOTE = "注意", IMPORTANT = "重要", TIP = "ヒント", CAUTION = "注意事項", WARNING = "警告"},
}
local lang = "en"

local function read_lang(meta)
  if meta.lang then lang = pandoc.utils.stringify(meta.lang) end
end

local function alert(quote)
  local first = quote.content[1]
  if first and first.t == "Para" and first.content[1] and first.content[1].t == "Str" then
    local kind = first.content[1].text:match("^%[!(%u+)%]$")
    if kind then
      local names = labels[lang] or labels.en
      first.content[1] = pandoc.Strong({pandoc.Str(names[kind] or kind)})
      return quote
    end
  end
end

return {
  {Meta = read_lang},
  {Image = function() return {} end, BlockQuote = alert},
}
"""

#: The running header and the page-number footer of the reference Word document.
_HEADER = {"en": "HoloLens 2 operations guide", "ja": "HoloLens 2 運用ガイド"}
_FOOTER = {"en": ("Page ", ""), "ja": ("－ ", " －")}
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PART = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/{}"
_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.{}+xml"


@dataclass(frozen=True)
class Made:
    """One made file: its variant, language, page name and path."""

    variant: str
    lang: str
    page: str  # the Markdown file's name
    path: Path
    source: Path


class ToolMissingError(RuntimeError):
    """A tool this script runs is not installed; the message says which package has it."""


def _run(command: Sequence[str], *, cwd: Path | None = None) -> str:
    done = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT, check=False
    )
    if done.returncode != 0:
        msg = f"{command[0]} failed ({done.returncode}): {done.stderr.strip()[-800:]}"
        raise RuntimeError(msg)
    return done.stdout


def _tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        msg = f"{name} is not installed: apt-get install {package}"
        raise ToolMissingError(msg)
    return found


def tool_versions(variants: Iterable[str]) -> dict[str, str]:
    """The version line of every tool the variants need (recorded in the manifest)."""
    wanted = {"pandoc": ("pandoc", "pandoc", "--version")}
    if "chromium-pdf" in variants:
        wanted["chromium"] = ("chromium", "chromium", "--version")
    office = [p for v, p in _OFFICE_PACKAGES.items() if v in variants]
    if office:
        wanted["soffice"] = ("soffice", " ".join(office), "--version")
    return {
        key: _run([_tool(name, package), flag]).splitlines()[0].strip()
        for key, (name, package, flag) in wanted.items()
    }


def page_markdown(source: Path) -> tuple[str, str]:
    """A page's Markdown without its front matter, and its title (front matter, else the name)."""
    text = source.read_text(encoding="utf-8")
    front = _FRONT_MATTER.match(text)
    title = source.stem
    if front:
        found = _TITLE.search(front.group(0))
        if found:
            title = found.group(1).strip("'\"")
        text = text[front.end() :]
    return text, title


def reference_docx(pandoc: str, lang: str, out: Path) -> Path:
    """pandoc's reference Word document with a running header and a page-number footer."""
    plain = out.with_suffix(".plain.docx")
    _run([pandoc, "-o", str(plain), "--print-default-data-file", "reference.docx"])
    before, after = _FOOTER[lang]
    header = (
        f'<w:hdr xmlns:w="{_W}"><w:p><w:pPr><w:jc w:val="right"/></w:pPr>'
        f"<w:r><w:t>{_HEADER[lang]}</w:t></w:r></w:p></w:hdr>"
    )
    footer = (
        f'<w:ftr xmlns:w="{_W}"><w:p><w:pPr><w:jc w:val="center"/></w:pPr>'
        f'<w:r><w:t xml:space="preserve">{before}</w:t></w:r>'
        '<w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>'
        f'<w:r><w:t xml:space="preserve">{after}</w:t></w:r></w:p></w:ftr>'
    )
    section = (
        '<w:sectPr><w:headerReference w:type="default" r:id="rIdMadeHeader"/>'
        '<w:footerReference w:type="default" r:id="rIdMadeFooter"/>'
        '<w:pgSz w:w="11906" w:h="16838"/>'
        '<w:pgMar w:top="1440" w:right="1300" w:bottom="1440" w:left="1300" w:header="720" '
        'w:footer="720" w:gutter="0"/></w:sectPr>'
    )
    relations = (
        f'<Relationship Type="{_PART.format("header")}" Id="rIdMadeHeader" Target="header1.xml" />'
        f'<Relationship Type="{_PART.format("footer")}" Id="rIdMadeFooter" Target="footer1.xml" />'
    )
    types = (
        f'<Override PartName="/word/header1.xml" ContentType="{_TYPE.format("header")}" />'
        f'<Override PartName="/word/footer1.xml" ContentType="{_TYPE.format("footer")}" />'
    )
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:sectPr />", section.encode())
            elif item.filename == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", relations.encode() + b"</Relationships>")
            elif item.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", types.encode() + b"</Types>")
            dst.writestr(item, data)
        dst.writestr("word/header1.xml", header.encode())
        dst.writestr("word/footer1.xml", footer.encode())
    plain.unlink()
    return out


def _pandoc(
    pandoc: str, source: Path, *, lang: str, work: Path, to: str, out: Path, extra: Sequence[str] = ()
) -> None:
    text, title = page_markdown(source)
    body = work / f"{source.stem}.md"
    body.write_text(text, encoding="utf-8")
    # Through pandoc's JSON: a writer that embeds media (docx) fetches pictures before any
    # filter runs and prints their alt text when they are missing; the filter drops them first.
    tree = work / f"{source.stem}.json"
    metadata = ["--metadata", f"lang={lang}", "--metadata", f"pagetitle={title}"]
    filter_ = ["--lua-filter", str(work / "filter.lua")]
    _run([pandoc, "-f", "gfm", "-t", "json", *metadata, *filter_, "-o", str(tree), str(body)])
    _run([pandoc, "-f", "json", "-t", to, *extra, "-o", str(out), str(tree)])


def _print_pdf(chromium: str, html: Path, out: Path, profile: Path) -> None:
    _run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            f"--print-to-pdf={out}",
            "--generate-pdf-document-outline",
            html.as_uri(),
        ]
    )
    if not out.is_file():
        msg = f"chromium wrote no PDF for {html}"
        raise RuntimeError(msg)


def _export_pdfs(
    soffice: str, docx: Sequence[Path], outdir: Path, work: Path, *, export: str = "writer_pdf_Export"
) -> None:
    options = {"UseTaggedPDF": True, "ExportBookmarks": True}
    spec = json.dumps({k: {"type": "boolean", "value": str(v).lower()} for k, v in options.items()})
    _run(
        [
            soffice,
            f"-env:UserInstallation={(work / 'lo-profile').as_uri()}",
            "--headless",
            "--convert-to",
            f"pdf:{export}:{spec}",
            "--outdir",
            str(outdir),
            *map(str, docx),
        ]
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class _Tools:
    pandoc: str
    versions: dict[str, str]
    work: Path  # a scratch folder holding the Lua filter


def ensure(
    out: Path = DEFAULT_OUT,
    *,
    pages: Path = DEFAULT_PAGES,
    variants: Sequence[str] = VARIANTS,
    langs: Sequence[str] = LANGS,
    log: bool = True,
) -> list[Made]:
    """Make every file of ``variants`` × ``langs`` that is missing or out of date; return them all.

    Raises:
        ValueError: For an unknown variant.
        ToolMissingError: When pandoc, chromium or soffice is needed and not installed.
        RuntimeError: When a tool fails (its message is kept).
    """
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        msg = f"unknown variants {unknown}; known: {', '.join(VARIANTS)}"
        raise ValueError(msg)
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    files: dict[str, dict[str, str]] = manifest.get("files", {})
    made: list[Made] = []
    with tempfile.TemporaryDirectory(prefix="made-docs-") as folder:
        tools = _Tools(_tool("pandoc", "pandoc"), tool_versions(variants), Path(folder))
        (tools.work / "filter.lua").write_text(_LUA_FILTER, encoding="utf-8")
        for lang in langs:
            sources = sorted((pages / lang).glob("*.md"))
            todo: dict[str, list[Path]] = {v: [] for v in variants}
            for source in sources:
                for variant in variants:
                    path = out / variant / lang / (source.stem + SUFFIX[variant])
                    made.append(Made(variant, lang, source.name, path, source))
                    if not _fresh(
                        files.get(f"{variant}/{lang}/{path.name}", {}), path, source, variant, tools
                    ):
                        todo[variant].append(source)
            _make_language(out, lang, todo, tools, log=log)
            for variant, done in todo.items():
                for source in done:
                    path = out / variant / lang / (source.stem + SUFFIX[variant])
                    files[f"{variant}/{lang}/{path.name}"] = {
                        "source": f"hololens/{lang}/{source.name}",
                        "source_sha256": _sha256(source),
                        "recipe": str(RECIPE),
                        "tool": _tool_of(variant, tools.versions),
                        "sha256": _sha256(path),
                    }
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "about": "made by benchmarks/make_pdfs.py from ../shared/data/hololens (CC BY 4.0, © Microsoft)",
        "recipe": RECIPE,
        "tools": {**manifest.get("tools", {}), **tools.versions},
        "files": dict(sorted(files.items())),
    }
    manifest_path.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    return made


def _fresh(record: dict[str, str], path: Path, source: Path, variant: str, tools: _Tools) -> bool:
    return (
        path.is_file()
        and record.get("source_sha256") == _sha256(source)
        and record.get("recipe") == str(RECIPE)
        and record.get("tool") == _tool_of(variant, tools.versions)
    )


def _make_language(out: Path, lang: str, todo: dict[str, list[Path]], tools: _Tools, *, log: bool) -> None:
    """Make one language's missing files: the Word files first (LibreOffice exports them)."""
    docx_needed = sorted({*todo.get("pandoc-docx", []), *todo.get("libreoffice-pdf", [])})
    if docx_needed:
        reference = reference_docx(tools.pandoc, lang, tools.work / f"reference-{lang}.docx")
        target = out / "pandoc-docx" / lang
        target.mkdir(parents=True, exist_ok=True)
        for source in docx_needed:
            docx = target / f"{source.stem}.docx"
            extra = ["--reference-doc", str(reference)]
            _pandoc(tools.pandoc, source, lang=lang, work=tools.work, to="docx", out=docx, extra=extra)
        _note(log, f"pandoc-docx [{lang}]: {len(docx_needed)} Word files")
    if todo.get("libreoffice-pdf"):
        soffice = _tool("soffice", "libreoffice-writer-nogui")
        target = out / "libreoffice-pdf" / lang
        target.mkdir(parents=True, exist_ok=True)
        files = [out / "pandoc-docx" / lang / f"{s.stem}.docx" for s in todo["libreoffice-pdf"]]
        _export_pdfs(soffice, files, target, tools.work)
        _note(log, f"libreoffice-pdf [{lang}]: {len(files)} PDFs")
    if todo.get("impress-pdf"):
        soffice = _tool("soffice", "libreoffice-impress-nogui")
        target = out / "impress-pdf" / lang
        target.mkdir(parents=True, exist_ok=True)
        decks = tools.work / "pptx" / lang
        decks.mkdir(parents=True, exist_ok=True)
        files = []
        for source in todo["impress-pdf"]:
            title = page_markdown(source)[1]
            deck = decks / f"{source.stem}.pptx"
            extra = ["--slide-level=3", "--metadata", f"title={title}"]
            _pandoc(tools.pandoc, source, lang=lang, work=tools.work, to="pptx", out=deck, extra=extra)
            files.append(deck)
        _export_pdfs(soffice, files, target, tools.work, export="impress_pdf_Export")
        _note(log, f"impress-pdf [{lang}]: {len(files)} PDFs")
    if todo.get("chromium-pdf"):
        chromium = _tool("chromium", "chromium")
        target = out / "chromium-pdf" / lang
        target.mkdir(parents=True, exist_ok=True)
        pages_html = out / "html" / lang  # a stable folder: Chromium prints the page's URL
        pages_html.mkdir(parents=True, exist_ok=True)
        for source in todo["chromium-pdf"]:
            html = pages_html / f"{source.stem}.html"
            _pandoc(
                tools.pandoc, source, lang=lang, work=tools.work, to="html5", out=html, extra=["--standalone"]
            )
            _print_pdf(chromium, html, target / f"{source.stem}.pdf", tools.work / "chromium-profile")
        _note(log, f"chromium-pdf [{lang}]: {len(todo['chromium-pdf'])} PDFs")


def _tool_of(variant: str, versions: dict[str, str]) -> str:
    tool = {"chromium-pdf": "chromium", "libreoffice-pdf": "soffice", "impress-pdf": "soffice"}.get(variant)
    return " + ".join(v for v in (versions["pandoc"], versions.get(tool or "", "")) if v)


def _note(log: bool, text: str) -> None:
    if log:
        print(f"  made {text}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES, help="the hololens folder")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--langs", nargs="+", choices=LANGS, default=list(LANGS))
    args = parser.parse_args(argv)
    # Chromium is handed file URIs, which need absolute paths.
    made = ensure(args.out.resolve(), pages=args.pages.resolve(), variants=args.variants, langs=args.langs)
    print(f"{len(made)} files under {args.out}")


if __name__ == "__main__":
    main()
