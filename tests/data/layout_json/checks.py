"""Checks shared by the Azure, Google and Textract reader tests.

Each check reads one fixture through ``ProcedureChunker.iter_chunks_from_source`` and
compares the chunks with the printed document the fixture was generated from
(``make_fixtures.py``): the same headings, the same numbered steps, every word.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from procedure_rag import ChunkLevel, ProcedureChunker, ReaderError, chunk_metadata, read_metadata
from procedure_rag._language.text import join_lines
from procedure_rag._types import Chunk

HERE = Path(__file__).resolve().parent
_WORD = re.compile(r"[A-Za-z0-9]+|[\u3040-\u30ff\u4e00-\u9fff]")


@cache
def make_fixtures() -> ModuleType:
    """The fixture generator, imported from its file."""
    spec = importlib.util.spec_from_file_location("make_fixtures", HERE / "make_fixtures.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_fixtures"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@cache
def _built() -> dict[str, str]:
    return make_fixtures().build()


def check_fixture_is_current(file: str) -> None:
    """The committed fixture is what the generator writes (regenerate with make_fixtures.py)."""
    assert (HERE / file).read_text(encoding="utf-8") == _built()[file]


def load(file: str) -> dict[str, object]:
    """A committed fixture, parsed."""
    data = json.loads((HERE / file).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def printed(file: str) -> list[object]:
    """The printed blocks (furniture included) a fixture was generated from, page by page."""
    gen = make_fixtures()
    ((service, name),) = [key for key, value in gen.PLAN.items() if value == file]
    doc = next(d for d in gen.load_docs() if d.name == name)
    geometry = {"azure": gen.PageGeometry(*gen.LETTER, "inch")}.get(service, gen.PageGeometry(*gen.A4, "pt"))
    return [block for page in gen.lay_out(doc, geometry, max_pages=gen.MAX_PAGES[service]) for block in page]


@cache
def chunks(file: str, fmt: str) -> tuple[Chunk, ...]:
    """The child chunks of a fixture (format named; auto-detection must agree)."""
    chunker = ProcedureChunker()
    named = list(chunker.iter_chunks_from_source(load(file), source_id=file, source_format=fmt))
    auto = list(chunker.iter_chunks_from_source(load(file), source_id=file))
    assert [c.chunk_id for c in auto] == [c.chunk_id for c in named]
    return tuple(c for c in named if c.level is ChunkLevel.CHILD)


def heading_paths(file: str, *, flat: bool) -> set[tuple[str, ...]]:
    """Section paths the printed headings give (``flat``: title > heading, as Textract sees them)."""
    paths: set[tuple[str, ...]] = set()
    stack: list[tuple[int, str]] = []
    for block in printed(file):
        if block.role == "title":
            stack = [(0, block.text)]
        elif block.role == "heading":
            level = 1 if flat else block.level
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, block.text))
        else:
            continue
        paths.add(tuple(text for _, text in stack))
    return paths


def check_section_paths(file: str, fmt: str, *, flat: bool = False) -> None:
    """Every chunk sits under a printed heading path, and every path with text has a chunk."""
    expected = heading_paths(file, flat=flat)
    got = {c.section_path for c in chunks(file, fmt)}
    assert got <= expected
    # A heading followed directly by a subheading has no chunk of its own.
    assert len(got) >= len(expected) * 0.7


def printed_procedures(file: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Numbered top-level lists as printed: (heading, [(number, first words)])."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    heading = ""
    key = None
    for block in printed(file):
        if block.role in ("title", "heading"):
            heading = block.text
        if block.role == "item" and block.ordered and block.indent == 0:
            if block.list_key != key:
                out.append((heading, []))
                key = block.list_key
            out[-1][1].append((block.marker, _head(block.text)))
    return out


def _head(text: str) -> str:
    return " ".join(_WORD.findall(text)[:4])


def check_steps(file: str, fmt: str) -> None:
    """Every numbered procedure comes back whole, in order, with its number strings, under its heading."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for c in chunks(file, fmt):
        for step in c.steps:
            if step.depth == 0 and not step.is_continuation and step.number[:1].isdigit():
                found.setdefault((c.section_path[-1], step.element_id), []).append(
                    (step.number, _head(step.text))
                )
    by_heading: dict[str, list[tuple[str, str]]] = {}
    for (heading, _), steps in found.items():
        by_heading.setdefault(heading, []).extend(steps)
    procedures = printed_procedures(file)
    assert procedures
    for heading, steps in procedures:
        got = by_heading.get(heading, [])
        assert [s for s in got if s in steps] == steps, heading


def check_lead_in(file: str, fmt: str, heading: str, condition: str) -> None:
    """The sentence before a list is the condition of the chunk that holds its steps."""
    holding = [c for c in chunks(file, fmt) if c.section_path[-1:] == (heading,) and c.steps]
    assert holding
    assert all(condition in c.condition for c in holding)


def check_caution(file: str, fmt: str, step_words: str, caution: str) -> None:
    """A note right after a step (or a warning sentence in it) is that step's caution."""
    steps = [s for c in chunks(file, fmt) for s in c.steps if step_words in s.text]
    assert steps
    assert any(caution in s.caution for s in steps)


def check_pages_and_boxes(file: str, fmt: str, page_size: list[object] | None) -> None:
    """Page, pages, boxes and record refs reach the metadata, and the refs exist in the JSON."""
    data_text = (HERE / file).read_text(encoding="utf-8")
    data = load(file)
    for c in chunks(file, fmt):
        meta = read_metadata(chunk_metadata(c))
        assert meta["page"] == min(meta["pages"])
        assert meta["boxes"]
        for box in meta["boxes"]:
            assert box["page"] in meta["pages"]
            left, top, right, bottom = box["bbox"]
            assert 0 <= left <= right <= 1
            assert 0 <= top <= bottom <= 1
            assert box.get("page_size") == page_size
        assert meta["source_record_refs"]
        for ref in meta["source_record_refs"]:
            assert _ref_exists(ref, data, data_text), ref


def _ref_exists(ref: str, data: dict[str, object], data_text: str) -> bool:
    if ref.startswith("/"):  # Azure: "/paragraphs/3", "/figures/0"
        _, kind, index = ref.split("/")[:3]
        result = data["analyzeResult"]
        assert isinstance(result, dict)
        return int(index) < len(result[kind])
    return f'"{ref}"' in data_text  # a Textract block Id or a Google blockId


def check_no_words_lost(file: str, fmt: str) -> None:
    """Every word printed in the body (not the running furniture) is in some chunk."""
    source = Counter(
        w
        for block in printed(file)
        if block.role not in ("header", "footer", "number")
        # The words as printed: a path wrapped mid-word reads as two words on the page.
        for w in _WORD.findall(join_lines(block.lines))
    )
    got = Counter(w for c in chunks(file, fmt) for w in _WORD.findall(c.text))
    assert not source - got


Mutation = Callable[[dict[str, object]], object]


def check_malformed(fmt: str, file: str, mutate: Mutation, record: str, problem: str) -> None:
    """A broken fixture gives a ReaderError naming the record, never a KeyError or TypeError."""
    data = copy.deepcopy(load(file))
    mutate(data)
    chunker = ProcedureChunker()
    with pytest.raises(ReaderError) as info:
        list(chunker.iter_chunks_from_source(data, source_id="bad", source_format=fmt))
    assert info.value.source_format == fmt
    assert info.value.record == record
    assert problem in info.value.problem
