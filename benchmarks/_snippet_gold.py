"""Gold as text snippets (``questions/real_docs_dev.jsonl``), and HoloLens gold carried over to made files.

Binary formats have no single source text to point into, so their gold is text. The rules
(``../shared/data/README.md``, "Snippet-gold format"):

- A chunk **covers** a snippet when the snippet, NFKC-normalised with all whitespace
  removed, is a substring of the chunk's text normalised the same way (a reader that
  extracts better text still matches).
- **answered@k**: one of the top-k chunks from the question's ``doc`` covers all its
  ``step`` snippets; **complete@k**: one such chunk covers every snippet.

The HoloLens questions (gold as character spans of the Markdown pages) carry over to the
PDFs and Word files made from those pages (``benchmarks/make_pdfs.py``) by their gold
text: each span's Markdown is rendered as the printed page shows it (emphasis, links and
code marks dropped, entities decoded, one snippet per line so a list number the printer
draws between two items does not break the match) and checked against the text pypdf (or
the Word file's paragraphs) gives for the made file; a question whose snippets are not all
there is left out and named in the output.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _doc_text import document_text
from _retrieval_eval import Dataset, Question, Returned, Source

__all__ = [
    "SnippetGold",
    "carry_over",
    "is_snippet_file",
    "load_snippet_questions",
    "made_datasets",
    "markdown_snippets",
    "squeeze",
]

_SPACE = re.compile(r"\s+")
#: Snippets shorter than this (whitespace removed) would match almost anywhere: dropped.
MIN_SNIPPET = 3
_FORMAT_OF = {".pdf": "pdf", ".docx": "docx", ".xlsx": "xlsx", ".xlsm": "xlsx"}


def squeeze(text: str) -> str:
    """``text`` NFKC-normalised, with every whitespace character removed."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text))


@dataclass(frozen=True, slots=True)
class SnippetGold:
    """Gold as text: the step snippets answer, all snippets complete (all stored squeezed)."""

    doc: str
    steps: tuple[str, ...]
    snippets: tuple[str, ...]

    @classmethod
    def of(cls, doc: str, gold: Iterable[tuple[str, str]]) -> SnippetGold:
        """From ``(role, text)`` pairs; a question without a step snippet answers on all of them."""
        pairs = [(role, squeeze(text)) for role, text in gold]
        every = tuple(text for _, text in pairs if text)
        steps = tuple(text for role, text in pairs if role == "step" and text)
        return cls(doc, steps or every, every)

    def _holds(self, chunk: Returned, wanted: Sequence[str]) -> bool:
        if chunk.doc != self.doc or not wanted:
            return False
        text = squeeze(chunk.text)
        return all(snippet in text for snippet in wanted)

    def answers(self, chunk: Returned) -> bool:
        return self._holds(chunk, self.steps)

    def completes(self, chunk: Returned) -> bool:
        return self._holds(chunk, self.snippets)


def _corpus_files(docs_root: Path, docs: Iterable[str], suffix: str) -> list[str]:
    """The named documents plus every file of the same suffix in their folders (the distractors)."""
    names = set(docs)
    for doc in docs:
        folder = (docs_root / doc).parent
        names.update(str(p.relative_to(docs_root)) for p in folder.glob(f"*{suffix}") if p.is_file())
    return sorted(names)


def load_snippet_questions(path: Path, docs_root: Path) -> list[Dataset]:
    """A snippet-gold question file as one dataset per file format (``{stem}/pdf``, ``/docx``, ``/xlsx``).

    Each dataset's corpus, per language, is the documents its questions name plus every file
    of the same suffix in their folders. Every snippet is looked up in the reference text
    (pypdf's for a PDF, the paragraphs for a Word file, the cells sheet by sheet for a
    workbook, a sheet being a page): the count of those found on their page (a PDF, a
    workbook) or in the document is kept in the dataset's ``facts``.

    Raises:
        ValueError: For a document of a format this benchmark does not read.
    """
    by_format: dict[str, list[tuple[dict[str, Any], Question]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        suffix = Path(record["doc"]).suffix.lower()
        if suffix not in _FORMAT_OF:
            msg = f"{record['qid']}: {record['doc']}: no reader for {suffix!r} in the snippet benchmark"
            raise ValueError(msg)
        gold = SnippetGold.of(record["doc"], ((g["role"], g["text"]) for g in record["gold"]))
        question = Question(record["qid"], record["lang"], record["question"], record["type"], gold)
        by_format.setdefault(_FORMAT_OF[suffix], []).append((record, question))
    datasets = []
    for fmt, pairs in sorted(by_format.items()):
        corpora: dict[str, tuple[Source, ...]] = {}
        for lang in sorted({q.lang for _, q in pairs}):
            docs = {r["doc"] for r, q in pairs if q.lang == lang}
            names = _corpus_files(docs_root, docs, "." + fmt)
            corpora[lang] = tuple(Source(d, "", lang, fmt, docs_root / d) for d in names)
        checked = check_snippets([r for r, _ in pairs], docs_root)
        datasets.append(
            Dataset(
                f"{path.stem}/{fmt}",
                tuple(q for _, q in pairs),
                corpora,
                "per language: the documents the questions name, plus every file of the same suffix "
                "in their folders",
                kind=fmt,
                facts={"gold_check": checked},
            )
        )
    return datasets


def check_snippets(records: Sequence[Mapping[str, Any]], docs_root: Path) -> dict[str, Any]:
    """How many gold snippets the reference text holds on their own page (PDF) or document (Word)."""
    total = found = 0
    missing: list[str] = []
    for record in records:
        pages = document_text(docs_root / record["doc"])
        for gold in record["gold"]:
            total += 1
            page = gold.get("page")
            where = pages[page - 1] if isinstance(page, int) and 0 < page <= len(pages) else "".join(pages)
            if squeeze(gold["text"]) in squeeze(where):
                found += 1
            else:
                missing.append(f"{record['qid']} p{page}: {gold['text'][:40]!r}")
    return {"snippets": total, "found_on_their_page": found, "missing": missing}


# -- HoloLens gold carried over to made files ---------------------------------------------------

_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>]+)>")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_CODE = re.compile(r"`+([^`]*)`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_LIST_MARK = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+])\s+")
_ALERT = re.compile(r"\[!(NOTE|IMPORTANT|TIP|CAUTION|WARNING)\]")
_ASIDE = 0xF0000  # plane 15, private use
_ASIDE_CHAR = re.compile("[\U000f0000-\U000f007f]")


def markdown_snippets(markdown: str) -> list[str]:
    """The printed text of a piece of Markdown, one snippet per line (see the module docstring).

    Lines shorter than :data:`MIN_SNIPPET` characters once whitespace is removed are
    dropped: they would match almost any chunk.
    """
    out = []
    for raw in markdown.splitlines():
        # An escaped mark is text: kept aside (a private-use stand-in) while the marks go.
        line = _ESCAPE.sub(lambda m: chr(_ASIDE + ord(m.group(1))), raw)
        line = _QUOTE.sub("", line)
        line = _LIST_MARK.sub("", line)
        line = _ALERT.sub("", line)
        line = _IMAGE.sub("", line)
        line = _LINK.sub(r"\1", line)  # "[a][b]" stays: a reference link only where "b" is defined
        line = _AUTOLINK.sub(r"\1", line)
        line = _CODE.sub(r"\1", line)
        line = _TAG.sub("", line)
        line = _STRONG.sub(r"\2", line)
        line = _EMPHASIS.sub(r"\1", line)
        line = _ASIDE_CHAR.sub(lambda m: chr(ord(m.group(0)) - _ASIDE), line)
        line = html.unescape(line)
        if len(squeeze(line)) >= MIN_SNIPPET:
            out.append(line.strip())
    return out


def carry_over(
    span_questions: Path,
    made: Sequence[tuple[str, str, Path]],
    *,
    name: str,
    kind: str,
    doc_of: Mapping[str, str],
) -> Dataset:
    """The span-gold questions of ``span_questions`` as snippet gold over made files.

    Args:
        span_questions: A question file in the span format (``hololens_dev.jsonl``).
        made: Every made file as (id, language, path); each language's corpus is its
            made files.
        name: The dataset's name.
        kind: The made files' format (``"pdf"``, ``"docx"``).
        doc_of: The question's ``doc`` (a Markdown page) -> the id of the file made from it.

    A question whose snippets are not all in its made file's reference text is left out;
    ``facts["left_out"]`` names it and the snippet that was not found.
    """
    paths = {doc: path for doc, _, path in made}
    questions: list[Question] = []
    left_out: list[str] = []
    snippets = found = 0
    langs: dict[str, set[str]] = {}
    for line in span_questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        doc = doc_of.get(record["doc"])
        if doc is None:
            continue
        reference = squeeze("".join(document_text(paths[doc])))
        pairs = [(g["role"], text) for g in record["gold_spans"] for text in markdown_snippets(g["text"])]
        absent = [text for _, text in pairs if squeeze(text) not in reference]
        snippets += len(pairs)
        found += len(pairs) - len(absent)
        if absent or not pairs:
            left_out.append(f"{record['qid']}: {absent[0][:50]!r}" if absent else f"{record['qid']}: no text")
            continue
        gold = SnippetGold.of(doc, pairs)
        questions.append(Question(record["qid"], record["lang"], record["question"], record["type"], gold))
        langs.setdefault(record["lang"], set())
    corpora = {
        lang: tuple(
            Source(doc, "", lang, kind, path) for doc, its_lang, path in sorted(made) if its_lang == lang
        )
        for lang in sorted(langs)
    }
    facts = {
        "gold_check": {"snippets": snippets, "found": found},
        "left_out": left_out,
        "carried_over_from": span_questions.name,
    }
    rule = "per language: every page made from the shared Markdown pages of that language"
    return Dataset(name, tuple(questions), corpora, rule, kind=kind, facts=facts)


def is_snippet_file(path: Path) -> bool:
    """Whether ``path`` is a question file in the snippet-gold format (records with ``gold`` texts)."""
    if not path.is_file() or path.suffix != ".jsonl":
        return False
    with path.open(encoding="utf-8") as handle:
        first = next((line for line in handle if line.strip()), "")
    record = json.loads(first) if first else {}
    return isinstance(record.get("gold"), list)


def made_datasets(variants: Sequence[str], span_questions: Path, made_dir: Path) -> list[Dataset]:
    """The HoloLens questions over the files ``make_pdfs.py`` makes (made first when missing).

    One dataset per variant (``hololens-chromium-pdf``, ...); a made file's id is its path
    under ``made_dir`` prefixed ``made/``.
    """
    import make_pdfs  # noqa: PLC0415 - a script beside this module

    out = []
    made = make_pdfs.ensure(made_dir, variants=variants)
    for variant in variants:
        files = [m for m in made if m.variant == variant]
        ids = {f"made/{m.path.relative_to(made_dir).as_posix()}": m for m in files}
        out.append(
            carry_over(
                span_questions,
                [(doc, m.lang, m.path) for doc, m in ids.items()],
                name=f"hololens-{variant}",
                kind=make_pdfs.SUFFIX[variant].lstrip("."),
                doc_of={f"hololens/{m.lang}/{m.page}": doc for doc, m in ids.items()},
            )
        )
    return out
