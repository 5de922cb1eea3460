"""Bundled data keeps its provenance: listed, licensed, and unchanged from the source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "src" / "procedure_rag" / "samples"
TESTS_DATA = ROOT / "tests" / "data"
DATA_ROOTS = {"samples": SAMPLES, "tests_data": TESTS_DATA}


def _is_licence(rel: Path) -> bool:
    return (
        rel.name in {"LICENSE", "SOURCES.md"}
        or "_license_evidence" in rel.parts
        or rel.name.endswith(".LICENSE.txt")
    )


def _data_files(root: Path) -> list[Path]:
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and not _is_licence(p.relative_to(root)) and p.parent.name != "questions"
    )


def _documents(root: Path) -> list[Path]:
    return [rel for rel in _data_files(root) if rel.suffix in {".md", ".txt"}]


@pytest.mark.parametrize("root", DATA_ROOTS.values(), ids=DATA_ROOTS.keys())
def test_every_data_file_is_listed_in_sources(root: Path) -> None:
    sources = (root / "SOURCES.md").read_text(encoding="utf-8")
    unlisted = [
        str(rel)
        for rel in _data_files(root)
        if f"`{rel.as_posix()}`" not in sources and rel.suffix != ".jsonl"
    ]
    assert unlisted == []


@pytest.mark.parametrize("root", DATA_ROOTS.values(), ids=DATA_ROOTS.keys())
def test_every_document_has_its_licence_beside_it(root: Path) -> None:
    unlicensed = []
    for rel in _documents(root):
        top = rel.parts[0]
        if top == "ja-native":
            evidence = root / "ja-native" / rel.parts[1] / "_license_evidence"
            if not any(evidence.glob("*")):
                unlicensed.append(str(rel))
        elif not (root / top / "LICENSE").is_file():
            unlicensed.append(str(rel))
    assert unlicensed == []


@pytest.mark.parametrize("root", DATA_ROOTS.values(), ids=DATA_ROOTS.keys())
def test_copies_are_byte_for_byte(root: Path, shared_data: Path) -> None:
    # Everything but the E-Manual excerpts, the question subsets and SOURCES.md is a copy; written/
    # is the project's own writing, its LICENSE the project's.
    copies = [
        rel
        for path in root.rglob("*")
        if path.is_file()
        and ((rel := path.relative_to(root)).parts[0] in {"hololens", "ja-native"} or path.name == "LICENSE")
        and rel.parts[0] != "written"
    ]
    assert copies
    changed = [
        str(rel)
        for rel in copies
        if not (shared_data / rel).is_file() or (shared_data / rel).read_bytes() != (root / rel).read_bytes()
    ]
    assert changed == []


def test_office_copies_are_byte_for_byte_with_their_licence(shared_data: Path) -> None:
    # tests/data/xlsx/ and the real .docx of tests/data/docx/ are copies of ../shared/data/real-docs/
    # files, each with its <name>.LICENSE.txt; the other .docx are pandoc-made (docx/make_docx.py).
    copies = [
        *sorted((TESTS_DATA / "xlsx").glob("*.xlsx")),
        TESTS_DATA / "docx/ja_osaka-u_cf-libs_python-manual.docx",
    ]
    assert len(copies) == 4
    for copy in copies:
        for rel in (copy.name, copy.name + ".LICENSE.txt"):
            original = shared_data / "real-docs" / rel
            assert original.read_bytes() == (copy.parent / rel).read_bytes(), rel


def _emanual_sections(shared_data: Path) -> dict[str, dict[str, str]]:
    lines = (shared_data / "emanual" / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    return {doc["doc_id"]: doc for doc in map(json.loads, lines)}


def test_emanual_excerpts_hold_their_sections(shared_data: Path) -> None:
    sections = _emanual_sections(shared_data)
    for index in sorted(TESTS_DATA.glob("emanual/*.sections.jsonl")):
        text = index.with_name(index.name.replace(".sections.jsonl", ".txt")).read_text(encoding="utf-8")
        for row in map(json.loads, index.read_text(encoding="utf-8").splitlines()):
            doc = sections[row["doc_id"]]
            expected = doc["title"] + ("\n" + doc["text"] if doc["text"] else "")
            assert text[row["start"] : row["end"]] == expected, row["doc_id"]


def test_question_spans_resolve_against_tests_data() -> None:
    checked = 0
    for questions in sorted(TESTS_DATA.glob("questions/*.jsonl")):
        for question in map(json.loads, questions.read_text(encoding="utf-8").splitlines()):
            text = (TESTS_DATA / question["doc"]).read_text(encoding="utf-8")
            for span in question["gold_spans"]:
                assert text[span["start"] : span["end"]] == span["text"], question["qid"]
                checked += 1
    assert checked > 0


def test_emanual_questions_point_at_bundled_sections() -> None:
    bundled = {
        row["doc_id"]
        for index in TESTS_DATA.glob("emanual/*.sections.jsonl")
        for row in map(json.loads, index.read_text(encoding="utf-8").splitlines())
    }
    lines = (TESTS_DATA / "emanual" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    gold = {json.loads(line)["gold_doc_id"] for line in lines}
    assert gold
    assert gold <= bundled
