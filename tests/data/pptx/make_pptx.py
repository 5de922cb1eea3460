"""Write the PowerPoint fixtures of tests/data/pptx/ with pandoc and LibreOffice Impress (see SOURCES.md).

Not run by the tests: the .pptx files are committed, so CI needs neither tool. To
rewrite them, run this file with pandoc 2.17 and LibreOffice 7.4 on the PATH (Debian:
``apt-get install pandoc libreoffice-impress-nogui``):

    python tests/data/pptx/make_pptx.py

Four kinds of deck, each made by a tool from a text source:

- ``hololens-recovery-{en,ja}.pptx``: pandoc from the HoloLens recovery page, changed
  as for the Word fixtures (front matter dropped, ``> [!NOTE]`` written as
  ``> **Note:**``, pictures given as 1x1 PNGs) and in one more way: the page's ``#``
  title becomes the deck's title (``--metadata title=``), so that pandoc makes a
  title slide, a section slide for each ``##`` and a slide for each ``###``
  (``--slide-level=3``)::

      pandoc --from gfm --to pptx --slide-level=3 --metadata title=<title> --output <name>.pptx

- ``hololens-restart-deck-{en,ja}.pptx``: pandoc from the Markdown in :data:`DECKS` (a
  deck written from the page's text: a title, section slides, a procedure over two
  slides, speaker notes, a note, a table)::

      pandoc --from markdown --to pptx --slide-level=2 --output <name>.pptx

- ``hololens-restart-deck-ja-libreoffice.pptx``: the Japanese deck above opened and
  saved again by LibreOffice Impress (``soffice --headless --convert-to pptx``), which
  writes its own layouts and the bullets into every paragraph.
- ``hololens-troubleshoot-libreoffice-ja.pptx``: LibreOffice Impress from the flat ODF
  presentation that :func:`troubleshoot_fodp` writes (the page's troubleshooting list
  with sub-steps, a picture with alt text, grouped labels, a table with a merged
  cell, speaker notes, and a hidden slide): what pandoc cannot write.

And the PDFs a presentation program writes (Impress's ``Creator``), for the slide titles of
page text: :data:`SLIDE_PDFS`, each deck above exported by LibreOffice Impress
(``soffice --headless --convert-to pdf``) to ``tests/data/pdf/<name>.impress.pdf``.

pandoc runs with ``SOURCE_DATE_EPOCH=0`` (the dates in the deck's properties); the times of
some zip entries, and LibreOffice's output, still change from run to run.
"""

# ruff: noqa: E501 - the decks' Markdown has a paragraph a line

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
#: fixture name -> the page it is made from (relative to tests/data).
PAGES = {
    "hololens-recovery-en.pptx": "hololens/en/hololens-recovery.md",
    "hololens-recovery-ja.pptx": "hololens/ja/hololens-recovery.md",
}
#: Decks exported as PDFs to tests/data/pdf/ (``<name>.impress.pdf``).
SLIDE_PDFS = (
    "hololens-recovery-en",
    "hololens-recovery-ja",
    "hololens-restart-deck-en",
    "hololens-restart-deck-ja",
)
#: fixture name -> the deck's pandoc Markdown, written from the recovery page's text (CC BY 4.0, © Microsoft).
DECKS = {
    "hololens-restart-deck-en": """\
---
title: Restart HoloLens 2
---

# Restart the device

## Standard restart procedure

1. Unplug the Type-C cable to disconnect the device from the power supply or the host PC.
2. Press and hold the **power** button for 15 seconds. All LEDs should be off.
3. Wait 2-3 seconds, and then short-press the **power** button. The LEDs close to the power button will light up, and the device will begin to start up.
4. Connect the device to the host PC, and then open Device Manager. Make sure the device enumerates correctly as *Microsoft HoloLens*.

::: notes
Under certain circumstances, you may have to manually restart the device without using the software UI. This may help you solve an issue you are encountering without having to reset/reflash your device.
:::

## Hard-restart procedure

If the standard reset procedure didn't work, use the hard-restart procedure:

1. Unplug the Type-C cable to disconnect the device from the power supply or the host PC.
2. Hold down the **volume down** + **power** buttons for 15 seconds. The device will automatically restart.

::: notes
If the device can't boot to the startup menu, perform the hard restart procedure with the device connected to the power supply, not to your host PC. Wait at least one hour for the device to charge.
:::

## Hard-restart procedure (continued)

3. Connect the device to the host PC.
4. Open Device Manager (for Windows 10 press the **Windows** key and then the **X** key, and then select **Device Manager**). Make sure the device enumerates correctly as *Microsoft HoloLens*.

**Note:** If possible, avoid using a PC to charge the device over USB, which is slow.

# Check the battery

## Battery indicator lights

Before you start any troubleshooting procedure, make sure that your device is charged to **20 to 40 percent** of battery capacity, if possible.

| Battery indicator | What it means |
|---|---|
| The lights show the current level of charge | The device is charging |
| The last light fades in and out | Charging is active |
| Only one of the five lights is on | The battery level is below 20 percent |
| One light blinks briefly, then goes out | The battery level is critically low |
""",
    "hololens-restart-deck-ja": """\
---
title: HoloLens 2 を再起動する
---

# デバイスを再起動します

## 標準の再起動手順

1. Type-C ケーブルを抜いて、デバイスを電源またはホスト PC から切断します。
2. **[電源]** ボタンを 15 秒間押し続けます。 すべての LED がオフになるはずです。
3. 2 - 3 秒待ってから、 **[電源]** ボタンを短く押します。 電源ボタンの近くの LED が点灯し、デバイスが起動します。
4. デバイスをホスト PC に接続し、デバイス マネージャーを開きます。 デバイスが *Microsoft HoloLens* として正しく列挙されていることを確認します。

::: notes
状況によっては、ソフトウェアの UI を使用せずにデバイスを手動で再起動する必要がある場合があります。 これにより、デバイスをリセットまたは再フラッシュすることなく、発生している問題を解決できる場合があります。
:::

## ハード再起動の手順

標準のリセット手順が機能しない場合は、ハード再起動の手順を使用してください。

1. Type-C ケーブルを抜いて、デバイスを電源またはホスト PC から切断します。
2. **[ボリューム ダウン]** ボタン + **[電源]** ボタンを 15 秒間押したままにします。 デバイスが自動的に再起動します。

::: notes
デバイスが起動メニューから起動できない場合は、ホスト PC ではなく、電源に接続されたデバイスでハード再起動の手順を実行してください。 デバイスが充電されるまで少なくとも 1 時間待ちます。
:::

## ハード再起動の手順（続き）

3. デバイスをホスト PC に接続します。
4. デバイス マネージャーを開きます (Windows 10 の場合は **Windows** キー、次に **X** キーを押して、**デバイス マネージャー** を選択します)。 デバイスが *Microsoft HoloLens* として正しく列挙されていることを確認します。

**メモ:** 可能であれば、PC を使用してデバイスを USB 経由で充電することは避けてください。遅いです。

# バッテリを確認する

## バッテリ インジケーター ライト

トラブルシューティングの手順を開始する前に、可能であれば、デバイスのバッテリ容量が **20 - 40%** 残っていることを確認してください。

| バッテリ インジケーター | 意味 |
|---|---|
| 現在の充電レベルを示して点灯する | デバイスの充電中 |
| 最後のライトがゆっくりと点滅する | 充電中 |
| 5 個のライトのうち 1 個しか点灯していない | バッテリー レベルが 20 パーセントを下回っている |
| 1 個のライトが短く点滅してから消える | バッテリー レベルが極端に低い |
""",
}
LIBREOFFICE_COPY = "hololens-restart-deck-ja"
TROUBLESHOOT = "hololens-troubleshoot-libreoffice-ja"
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_ALERT = re.compile(r"^(\s*>\s*)\[!([A-Za-z]+)\]", re.MULTILINE)
_TITLE = re.compile(r"^# (.+)\n", re.MULTILINE)
_ANCHOR = re.compile(r"<a name=\"[^\"]*\"></a>")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
_ENV = {**os.environ, "SOURCE_DATE_EPOCH": "0"}


def prepared(markdown: str) -> tuple[str, str]:
    """The page as pandoc reads it, and its title: front matter dropped, alerts as labels, ``#`` out."""
    body = _FRONT_MATTER.sub("", markdown, count=1)
    body = _ALERT.sub(lambda m: f"{m.group(1)}**{m.group(2).capitalize()}:**", body)
    title = _TITLE.search(body)
    assert title is not None
    return body[: title.start()] + body[title.end() :], _ANCHOR.sub("", title.group(1)).strip()


def make_page(name: str, page: str) -> None:
    markdown, title = prepared((DATA / page).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        for link in _IMAGE.findall(markdown):
            if "://" not in link:
                target = Path(tmp, link)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_PNG)
        command = [
            *("pandoc", "--from", "gfm", "--to", "pptx", "--slide-level=3"),
            *("--metadata", f"title={title}", "--resource-path", tmp, "--output", str(HERE / name)),
        ]
        subprocess.run(command, input=markdown, text=True, check=True, env=_ENV)  # noqa: S603 - fixed command


def make_deck(stem: str, markdown: str) -> None:
    command = ["pandoc", "--from", "markdown", "--to", "pptx", "--slide-level=2"]
    command += ["--output", str(HERE / f"{stem}.pptx")]
    subprocess.run(command, input=markdown, text=True, check=True, env=_ENV)  # noqa: S603 - fixed command


def libreoffice(source: Path, target: Path, to: str = "pptx") -> None:
    """``source`` converted to ``to`` (.pptx, .pdf) by LibreOffice Impress, written to ``target``."""
    with tempfile.TemporaryDirectory() as tmp:
        command = ["soffice", "--headless", f"-env:UserInstallation=file://{tmp}/profile"]
        command += ["--convert-to", to, "--outdir", tmp, str(source)]
        subprocess.run(command, check=True, capture_output=True)  # noqa: S603 - fixed command
        shutil.move(Path(tmp, f"{source.stem}.{to}"), target)


# ----- the flat ODF presentation for LibreOffice ----------------------------------------------------

_NS = " ".join(
    f'xmlns:{prefix}="{uri}"'
    for prefix, uri in {
        "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
        "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
        "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
        "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
        "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
        "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
        "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
        "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
        "xlink": "http://www.w3.org/1999/xlink",
    }.items()
)
_BOX = 'svg:x="{x}cm" svg:y="{y}cm" svg:width="{w}cm" svg:height="{h}cm"'


def _frame(cls: str, box: tuple[float, float, float, float], body: str) -> str:
    x, y, w, h = box
    where = _BOX.format(x=x, y=y, w=w, h=h)
    return (
        f'<draw:frame presentation:style-name="pr1" presentation:class="{cls}" '
        f'presentation:user-transformed="true" {where}><draw:text-box>{body}</draw:text-box></draw:frame>'
    )


def _paragraphs(*texts: str) -> str:
    return "".join(f"<text:p>{escape(t)}</text:p>" for t in texts)


def _numbered(items: list[tuple[str, list[str]]]) -> str:
    def item(text: str, subs: list[str]) -> str:
        inner = "".join(f"<text:list-item>{_paragraphs(sub)}</text:list-item>" for sub in subs)
        nested = f"<text:list>{inner}</text:list>" if subs else ""
        return f"<text:list-item>{_paragraphs(text)}{nested}</text:list-item>"

    return '<text:list text:style-name="Lnum">' + "".join(item(t, subs) for t, subs in items) + "</text:list>"


def _box(text: str, box: tuple[float, float, float, float]) -> str:
    x, y, w, h = box
    where = _BOX.format(x=x, y=y, w=w, h=h)
    return f"<draw:frame {where}><draw:text-box>{_paragraphs(text)}</draw:text-box></draw:frame>"


def _page(name: str, content: str, *, notes: str = "", hidden: bool = False) -> str:
    style = ' draw:style-name="dpHidden"' if hidden else ""
    notes_frame = _frame("notes", (1, 1, 15, 10), _paragraphs(notes))
    notes_xml = f"<presentation:notes>{notes_frame}</presentation:notes>" if notes else ""
    head = f'<draw:page draw:name="{name}" draw:master-page-name="Default"{style}>'
    return f"{head}{content}{notes_xml}</draw:page>"


def _table(header: str, rows: list[tuple[str, str]]) -> str:
    cell = "<table:table-cell>{}</table:table-cell>"
    body = "".join(
        f"<table:table-row>{cell.format(_paragraphs(a))}{cell.format(_paragraphs(b))}</table:table-row>"
        for a, b in rows
    )
    merged = f'<table:table-cell table:number-columns-spanned="2">{_paragraphs(header)}</table:table-cell>'
    return (
        f"<draw:frame {_BOX.format(x=1, y=3, w=24, h=6)}>"
        "<table:table><table:table-column/><table:table-column/>"
        f"<table:table-row>{merged}<table:covered-table-cell/></table:table-row>{body}</table:table></draw:frame>"
    )


#: The text of the troubleshooting deck, from the Japanese page (CC BY 4.0, © Microsoft).
_STEPS = [
    ("フラッシュを試みる前に、デバイスが 40% 以上に充電されるようにしてください。", []),
    ("デバイスがロックされていないことを確認します。", []),
    ("デバイスがハブではなくホスト PC に直接接続されていることを確認します。", []),
    (
        "デバイスがユニバーサル シリアル バス ドライバーに HoloLens/HoloLens Recovery デバイスと"
        "表示されない場合は、次のことを確認します。",
        ["[ポート] (Qualcomm HS-USB デバイスの場合)", "[その他のデバイス] (QUSB_BULK デバイスの場合)"],
    ),
]
_NOTES = (
    "ARC によってデバイスが検出されない場合は、"
    "PC 上のデバイスからデバイスへエクスプローラーから接続できます。"
)
_ALT = "HoloLens 2 MicrosoftHoloLensRecovery デバイス マネージャー。"
_HIDDEN = "この方法でリセットすると、すべてのユーザー アカウントが削除され、すべてのデータが消去されます。"
_BATTERY = [
    ("5 個のライトのうち 1 個しか点灯していない", "バッテリー レベルが 20 パーセントを下回っている"),
    ("1 個のライトが短く点滅してから消える", "バッテリー レベルが極端に低い"),
]
_STYLES = (
    '<style:style style:name="dpHidden" style:family="drawing-page">'
    '<style:drawing-page-properties presentation:visibility="hidden"/></style:style>'
    '<style:style style:name="pr1" style:family="presentation"/>'
    '<text:list-style style:name="Lnum">'
    '<text:list-level-style-number text:level="1" style:num-format="1" style:num-suffix="."/>'
    '<text:list-level-style-number text:level="2" style:num-format="a" style:num-suffix=")"/>'
    "</text:list-style>"
    '<style:page-layout style:name="PM1"><style:page-layout-properties fo:page-width="28cm" '
    'fo:page-height="15.75cm" style:print-orientation="landscape"/></style:page-layout>'
)


def troubleshoot_fodp() -> str:
    """A flat ODF presentation of the Japanese page's troubleshooting list (text CC BY 4.0, © Microsoft)."""
    title = (1, 0.5, 26, 2)
    picture = (
        f"<draw:frame {_BOX.format(x=18, y=9, w=8, h=5)}>"
        f'<draw:image xlink:href="data:image/png;base64,{base64.b64encode(_PNG).decode()}"/>'
        f"<svg:title>デバイス マネージャー</svg:title><svg:desc>{_ALT}</svg:desc></draw:frame>"
    )
    labels = _box("[ボリューム ダウン] ボタン", (18, 14.5, 4, 1)) + _box("[電源] ボタン", (22, 14.5, 4, 1))
    first = (
        _frame("title", title, _paragraphs("Advanced Recovery Companion のトラブルシューティング"))
        + _frame("outline", (1, 3, 16, 12), _numbered(_STEPS))
        + picture
        + f"<draw:g>{labels}</draw:g>"
    )
    hidden = _frame("title", title, _paragraphs("社内向けメモ")) + _frame(
        "outline", (1, 3, 24, 10), _paragraphs(_HIDDEN)
    )
    battery = _frame("title", title, _paragraphs("バッテリを確認する")) + _table(
        "バッテリ インジケーター ライト", _BATTERY
    )
    pages = _page("s1", first, notes=_NOTES) + _page("s2", hidden, hidden=True) + _page("s3", battery)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document {_NS} office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.presentation">'
        f"<office:automatic-styles>{_STYLES}</office:automatic-styles>"
        '<office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM1"/>'
        f"</office:master-styles><office:body><office:presentation>{pages}</office:presentation></office:body>"
        "</office:document>"
    )


if __name__ == "__main__":
    for fixture, source in PAGES.items():
        make_page(fixture, source)
    for deck, markdown in DECKS.items():
        make_deck(deck, markdown)
    libreoffice(HERE / f"{LIBREOFFICE_COPY}.pptx", HERE / f"{LIBREOFFICE_COPY}-libreoffice.pptx")
    with tempfile.TemporaryDirectory() as folder:
        fodp = Path(folder, f"{TROUBLESHOOT}.fodp")
        fodp.write_text(troubleshoot_fodp(), encoding="utf-8")
        libreoffice(fodp, HERE / f"{TROUBLESHOOT}.pptx")
    for deck in SLIDE_PDFS:
        libreoffice(HERE / f"{deck}.pptx", DATA / "pdf" / f"{deck}.impress.pdf", to="pdf")
