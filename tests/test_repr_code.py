"""Code docstrings: the real DISM command, real XML, and Python through ast."""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkLevel, ChunkType, chunk
from procedure_rag._representations.offline.code import code_blocks, code_docstring

DATA = Path(__file__).resolve().parent / "data"


def _chunks(relative: str) -> list[Chunk]:
    return chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative)


def _code_chunk(code: str, language: str = "en") -> Chunk:
    return Chunk("c", code, ChunkType.CODE, ChunkLevel.CHILD, ("API",), "s", language)


@pytest.mark.parametrize(
    ("relative", "phrases"),
    [
        (
            "hololens/en/hololens-recovery.md",
            ("DISM command: Add-ProvisionedAppxPackage with", "/PackagePath", "/LicensePath", "/Region"),
        ),
        ("hololens/ja/hololens-recovery.md", ("DISM コマンド: Add-ProvisionedAppxPackage", "/PackagePath")),
    ],
)
def test_real_dism_command(relative: str, phrases: tuple[str, ...]) -> None:
    dism = next(c for c in _chunks(relative) if "dism /online" in c.text and c.level is ChunkLevel.CHILD)
    text = code_docstring(dism)
    for phrase in phrases:
        assert phrase in text
    assert (
        "/Add-ProvisionedAppxPackage" not in text.split("with")[-1]
    )  # the action is not listed as an option


@pytest.mark.parametrize("relative", ["hololens/en/hololens-network.md", "hololens/ja/hololens-network.md"])
def test_real_xml_names_root_and_comments(relative: str) -> None:
    texts = [code_docstring(c) for c in _chunks(relative) if c.chunk_type is ChunkType.CODE]
    assert any("WLANProfile" in t for t in texts)
    assert any("Configure VPN Server Name or Address" in t for t in texts)
    assert all(t for t in texts)


@pytest.mark.parametrize(
    ("code", "phrases"),
    [
        (
            "```python\n# Reset helpers\ndef reset(device: str, *, hard: bool = False) -> bool:\n"
            '    """Reset the device."""\n    return True\n```',
            ("function reset(device, hard) -> bool", "Reset the device.", "Reset helpers"),
        ),
        ("```python\nclass Device:\n    '''A HoloLens.'''\n```", ("class Device", "A HoloLens.")),
        ("```python\ndef broken(:\n    pass\n```", ("def broken(:",)),  # syntax error: signature lines
        (
            "```js\n// Connect\nfunction connect(host, port) {\n}\n```",
            ("function connect(host, port)", "Connect"),
        ),
        ("```console\n$ git commit -m 'x' --amend\n```", ("GIT command: commit", "-m", "--amend")),
    ],
)
def test_code_rules(code: str, phrases: tuple[str, ...]) -> None:
    text = code_docstring(_code_chunk(code))
    for phrase in phrases:
        assert phrase in text


def test_continued_block_without_opening_fence() -> None:
    blocks = code_blocks("    <Type>13</Type>\n</EapMethod>\n```", starts_inside=True)
    assert [b.language for b in blocks] == ["xml"]


def test_chunk_without_code_gives_nothing() -> None:
    prose = Chunk("c", "Just text.", ChunkType.TEXT, ChunkLevel.CHILD, (), "s", "en")
    assert code_docstring(prose) == ""
