"""Small text helpers shared by the readers and the renderer."""

from __future__ import annotations

import re

__all__ = ["is_cjk", "join_lines"]

_CJK = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]")


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is a Japanese (or other CJK) character or full-width punctuation."""
    return bool(ch) and _CJK.match(ch) is not None


def join_lines(lines: list[str]) -> str:
    """Join wrapped lines: no space between two CJK characters, one space otherwise."""
    if len(lines) == 1:
        return lines[0]
    out: list[str] = []
    for line in lines:
        if not line:
            continue
        if out and not (is_cjk(out[-1][-1]) and is_cjk(line[0])):
            out.append(" ")
        out.append(line)
    return "".join(out)
