"""The judging half of ``benchmarks/retrieval.py``: datasets, source spans, coverage, metrics.

Nothing here splits or embeds. A method hands over ranked lists of :class:`Returned`
chunks (document, text, source character spans); these functions read the question
sets and say how good the lists are. The rules, stated once (the output repeats them):

- A chunk **covers** a gold span when its source spans (in the same document) hold at
  least 90% of the span's characters.
- **answered@k**: one of the top-k chunks covers every ``step`` span of the question.
  **complete@k**: one single chunk among the top k covers every gold span (the step
  and its condition, caution or result). **mrr@10**: 1 / the rank of the first chunk
  that answers, within the top 10 (0 when none does).
- **tokens@k**: tokens (tiktoken ``cl100k_base``) of the returned chunk texts, summed.
- **budget_***: the same over the ranked list cut where the returned text reaches the
  token budget (1,000): whole chunks in rank order; the chunk that crosses the budget
  is truncated to the tokens left and keeps the same leading share of its source
  characters; chunks after it are dropped (k and 10 still cap the count).
- E-Manual (gold = a section document): a chunk answers when it comes from the gold
  section; it is complete when the source text it covers holds at least 90% of the
  answer's words that the whole section holds (word multisets, lower-cased ``\\w+``).
- Methods that give no source spans: the chunk text is located in its source with
  whitespace ignored (splitters strip and re-join lines); a chunk not found whole is
  located line by line; what cannot be found counts as not covered.
"""

from __future__ import annotations

import bisect
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = [
    "COVERAGE",
    "Dataset",
    "Located",
    "Question",
    "Returned",
    "SectionGold",
    "Source",
    "SourceIndex",
    "SpanGold",
    "Tokens",
    "covered_chars",
    "covers",
    "cut_to_budget",
    "load_dataset",
    "load_emanual",
    "load_span_questions",
    "locate",
    "merge",
    "row",
    "score_question",
]

#: Share of a gold span's characters a chunk must hold to cover it.
COVERAGE = 0.9

Span = tuple[int, int]
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_FORMATS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".html": "html"}


# -- data ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    """One document of a corpus: its id (path relative to the docs root), text, language, format.

    A binary file (PDF, Word) has no text here: ``path`` is the file the methods read.
    """

    doc: str
    text: str
    lang: str
    fmt: str = "markdown"
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class Returned:
    """One chunk a method returned: its document, its text, and the source spans it came from."""

    doc: str
    text: str
    spans: tuple[Span, ...]


class Gold(Protocol):
    """What a question counts as an answer."""

    @property
    def doc(self) -> str:
        """The document the answer is in."""
        ...  # pragma: no cover - a protocol

    def answers(self, chunk: Returned) -> bool:
        """Whether ``chunk`` answers the question."""
        ...  # pragma: no cover - a protocol

    def completes(self, chunk: Returned) -> bool:
        """Whether ``chunk`` holds the whole answer."""
        ...  # pragma: no cover - a protocol


@dataclass(frozen=True, slots=True)
class SpanGold:
    """Gold as source character spans: the step spans answer, all spans complete."""

    doc: str
    steps: tuple[Span, ...]
    spans: tuple[Span, ...]

    def answers(self, chunk: Returned) -> bool:
        return chunk.doc == self.doc and all(covers(chunk.spans, span) for span in self.steps)

    def completes(self, chunk: Returned) -> bool:
        return chunk.doc == self.doc and all(covers(chunk.spans, span) for span in self.spans)


@dataclass(frozen=True, slots=True)
class SectionGold:
    """Gold as a section document (E-Manual) and the answer's words."""

    doc: str
    section_text: str
    answer: Counter[str]
    reachable: int  # answer words the whole section holds

    @classmethod
    def of(cls, doc: str, section_text: str, answer: str) -> SectionGold:
        words = Counter(_WORD.findall(answer.lower()))
        reachable = sum((words & Counter(_WORD.findall(section_text.lower()))).values())
        return cls(doc, section_text, words, reachable)

    def answers(self, chunk: Returned) -> bool:
        return chunk.doc == self.doc

    def completes(self, chunk: Returned) -> bool:
        if chunk.doc != self.doc or self.reachable == 0:
            return False
        text = " ".join(self.section_text[start:end] for start, end in merge(chunk.spans))
        held = sum((self.answer & Counter(_WORD.findall(text.lower()))).values())
        return held >= COVERAGE * self.reachable


@dataclass(frozen=True, slots=True)
class Question:
    """One question: id, language, text, type, and what counts as its answer."""

    qid: str
    lang: str
    text: str
    qtype: str
    gold: Gold


@dataclass(frozen=True, slots=True)
class Dataset:
    """Questions and, per language, the corpus they are asked against.

    ``kind`` is what the corpus is: ``"text"`` (Markdown, plain text, HTML, reST, read as
    text) or a file format (``"pdf"``, ``"docx"``) whose files the methods read; ``facts``
    says how the gold was checked.
    """

    name: str
    questions: tuple[Question, ...]
    corpora: Mapping[str, tuple[Source, ...]]
    corpus_rule: str
    kind: str = "text"
    facts: Mapping[str, object] = field(default_factory=dict)

    @property
    def langs(self) -> list[str]:
        return sorted(self.corpora)


def read_source_text(path: Path) -> str:
    """A file as the question sets' offsets read it: UTF-8, text mode (newlines translated)."""
    with path.open(encoding="utf-8") as handle:
        return handle.read()


def source_format(path: str) -> str:
    """The format of a file, from its suffix (``.rst.txt`` Sphinx copies are reStructuredText)."""
    if path.endswith(".rst.txt"):
        return "rst"
    return _FORMATS.get(Path(path).suffix.lower(), "text")


def load_span_questions(path: Path, docs_root: Path, *, corpus: str = "folders") -> Dataset:
    """A question file with gold spans (``questions/*.jsonl``) and its per-language corpora.

    Args:
        path: The JSONL file.
        docs_root: The folder ``doc`` is relative to.
        corpus: ``"questions"``: the documents the questions of a language name;
            ``"folders"``: those plus every file of the same suffix in their folders
            (the rest of each manual, as distractors).

    Raises:
        ValueError: When a gold span's text does not match the document at its offsets.
    """
    questions: list[Question] = []
    docs_by_lang: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        doc = record["doc"]
        if doc not in texts:
            texts[doc] = read_source_text(docs_root / doc)
        spans = []
        for gold in record["gold_spans"]:
            if texts[doc][gold["start"] : gold["end"]] != gold["text"]:
                msg = f"{record['qid']}: gold span {gold['start']}:{gold['end']} does not match {doc}"
                raise ValueError(msg)
            spans.append((gold["role"], (gold["start"], gold["end"])))
        steps = tuple(span for role, span in spans if role == "step")
        gold_of = SpanGold(doc, steps, tuple(span for _, span in spans))
        questions.append(Question(record["qid"], record["lang"], record["question"], record["type"], gold_of))
        docs_by_lang.setdefault(record["lang"], set()).add(doc)
    corpora: dict[str, tuple[Source, ...]] = {}
    for lang, docs in docs_by_lang.items():
        names = set(docs)
        if corpus == "folders":
            for doc in docs:
                folder = (docs_root / doc).parent
                suffix = "".join(Path(doc).suffixes[-2:]) if doc.endswith(".rst.txt") else Path(doc).suffix
                names.update(str(p.relative_to(docs_root)) for p in folder.glob(f"*{suffix}") if p.is_file())
        sources = []
        for doc in sorted(names):
            if doc not in texts:
                try:
                    texts[doc] = read_source_text(docs_root / doc)
                except UnicodeDecodeError:
                    continue  # a distractor in another encoding: left out, and named in the settings
            sources.append(Source(doc, texts[doc], lang, source_format(doc)))
        corpora[lang] = tuple(sources)
    rule = {
        "questions": "the documents the questions name",
        "folders": "the documents the questions name, plus every file of the same suffix in their folders",
    }[corpus]
    return Dataset(path.stem, tuple(questions), corpora, f"per language: {rule}")


def load_emanual(folder: Path) -> Dataset:
    """E-Manual QA: ``docs.jsonl`` sections (each one document: title, blank line, text) and questions."""
    sources: dict[str, Source] = {}
    for line in (folder / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            text = f"{record['title']}\n\n{record['text']}"
            sources[record["doc_id"]] = Source(record["doc_id"], text, "en", "text")
    questions = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            section = sources[record["gold_doc_id"]]
            gold = SectionGold.of(section.doc, section.text, record["answer"])
            questions.append(Question(record["qid"], "en", record["question"], record["qa_type"], gold))
    rule = "every section of both manuals, one document each (title, blank line, text)"
    return Dataset("emanual", tuple(questions), {"en": tuple(sources.values())}, rule)


def load_dataset(path: Path, docs_root: Path, *, corpus: str = "folders") -> Dataset:
    """Read a question set, telling E-Manual from the span format.

    E-Manual is a folder holding ``docs.jsonl`` and ``questions.jsonl``, or a JSONL file
    whose records carry ``gold_doc_id`` with ``docs.jsonl`` beside it; any other JSONL is
    the span format.
    """
    if path.is_dir():
        return load_emanual(path)
    with path.open(encoding="utf-8") as handle:
        first = json.loads(next(line for line in handle if line.strip()))
    if "gold_doc_id" in first:
        return load_emanual(path.parent)
    return load_span_questions(path, docs_root, corpus=corpus)


# -- locating chunk texts in their sources ---------------------------------------


@dataclass(frozen=True, slots=True)
class Located:
    """Where a chunk text sits in its source: spans, and how much of it was found."""

    spans: tuple[Span, ...]
    whole: bool  # found in one piece
    found_chars: int
    chars: int  # non-whitespace characters of the chunk text


class SourceIndex:
    """A source text with whitespace removed, and the way back to original offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions = [i for i, ch in enumerate(text) if not ch.isspace()]
        self.squeezed = "".join(text[i] for i in self.positions)

    def find(self, key: str, hint: int = 0) -> Span | None:
        """The original span of ``key`` (whitespace-free), searched from ``hint`` on, then from 0."""
        start = bisect.bisect_left(self.positions, hint)
        at = self.squeezed.find(key, start)
        if at < 0:
            at = self.squeezed.find(key)
        if at < 0:
            return None
        return self.positions[at], self.positions[at + len(key) - 1] + 1


def _squeeze(text: str) -> str:
    return _SPACE.sub("", text)


def locate(text: str, source: SourceIndex, hint: int = 0) -> Located:
    """Find ``text`` in ``source`` ignoring whitespace; line by line when not found whole."""
    key = _squeeze(text)
    if not key:
        return Located((), whole=False, found_chars=0, chars=0)
    span = source.find(key, hint)
    if span is not None:
        return Located((span,), whole=True, found_chars=len(key), chars=len(key))
    spans: list[Span] = []
    found = 0
    cursor = hint
    for line in text.splitlines():
        piece = _squeeze(line)
        if len(piece) < 2:
            continue  # a lone character would match anywhere
        hit = source.find(piece, cursor)
        if hit is not None:
            spans.append(hit)
            found += len(piece)
            cursor = hit[1]
    return Located(merge(spans), whole=False, found_chars=found, chars=len(key))


# -- coverage and metrics ---------------------------------------------------------


def merge(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Sort and merge overlapping or touching spans."""
    out: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def covered_chars(spans: Iterable[Span], gold: Span) -> int:
    """Characters of ``gold`` that ``spans`` hold (overlaps among ``spans`` count once)."""
    start, end = gold
    return sum(max(0, min(b, end) - max(a, start)) for a, b in merge(spans))


def covers(spans: Iterable[Span], gold: Span, threshold: float = COVERAGE) -> bool:
    """Whether ``spans`` hold at least ``threshold`` of ``gold``'s characters."""
    return covered_chars(spans, gold) >= threshold * (gold[1] - gold[0])


def leading(spans: Sequence[Span], share: float) -> tuple[Span, ...]:
    """The first ``share`` of the characters of ``spans``, in source order."""
    total = sum(end - start for start, end in spans)
    left = round(total * share)
    out: list[Span] = []
    for start, end in merge(spans):
        if left <= 0:
            break
        take = min(end - start, left)
        out.append((start, start + take))
        left -= take
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token counting and cutting (tiktoken ``cl100k_base`` in the benchmark; anything in tests)."""

    count: Callable[[str], int]
    head: Callable[[str, int], str]  # the text of the first n tokens


def cut_to_budget(ranked: Sequence[Returned], budget: int, tokens: Tokens) -> list[Returned]:
    """Whole chunks in rank order until ``budget`` tokens; the crossing chunk is truncated to fit."""
    out: list[Returned] = []
    left = budget
    for chunk in ranked:
        if left <= 0:
            break
        size = tokens.count(chunk.text)
        if size <= left:
            out.append(chunk)
            left -= size
            continue
        kept = tokens.head(chunk.text, left)
        share = len(kept) / len(chunk.text) if chunk.text else 0.0
        out.append(Returned(chunk.doc, kept, leading(chunk.spans, share)))
        break
    return out


@dataclass(frozen=True, slots=True)
class QuestionScore:
    """One question's outcome for one method (ranks from 1; 0 when not found)."""

    qid: str
    answered_rank: int  # in the top-k list
    complete: bool
    mrr_rank: int  # first answering rank in the top-10 list
    tokens: int
    budget_answered_rank: int
    budget_complete: bool
    budget_mrr_rank: int
    budget_tokens: int


def _first(ranked: Sequence[Returned], test: Callable[[Returned], bool]) -> int:
    return next((rank for rank, chunk in enumerate(ranked, start=1) if test(chunk)), 0)


def score_question(
    question: Question,
    *,
    at_k: Sequence[Returned],
    at_10: Sequence[Returned],
    k: int,
    budget: int,
    tokens: Tokens,
) -> QuestionScore:
    """Score the method's top-k and top-10 lists for one question, plain and cut to ``budget``."""
    gold = question.gold
    top_k, top_10 = list(at_k)[:k], list(at_10)[:10]
    cut_k, cut_10 = cut_to_budget(top_k, budget, tokens), cut_to_budget(top_10, budget, tokens)
    return QuestionScore(
        qid=question.qid,
        answered_rank=_first(top_k, gold.answers),
        complete=any(gold.completes(chunk) for chunk in top_k),
        mrr_rank=_first(top_10, gold.answers),
        tokens=sum(tokens.count(chunk.text) for chunk in top_k),
        budget_answered_rank=_first(cut_k, gold.answers),
        budget_complete=any(gold.completes(chunk) for chunk in cut_k),
        budget_mrr_rank=_first(cut_10, gold.answers),
        budget_tokens=sum(tokens.count(chunk.text) for chunk in cut_k),
    )


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else 0.0


@dataclass(frozen=True, slots=True)
class _Columns:
    prefix: str
    answered: Callable[[QuestionScore], int]
    complete: Callable[[QuestionScore], bool]
    mrr: Callable[[QuestionScore], int]
    tokens: Callable[[QuestionScore], int]


_PLAIN = _Columns(
    "", lambda s: s.answered_rank, lambda s: s.complete, lambda s: s.mrr_rank, lambda s: s.tokens
)
_BUDGET = _Columns(
    "budget_",
    lambda s: s.budget_answered_rank,
    lambda s: s.budget_complete,
    lambda s: s.budget_mrr_rank,
    lambda s: s.budget_tokens,
)


def row(
    method: str, dataset: str, lang: str, scores: Sequence[QuestionScore], *, k: int
) -> dict[str, object]:
    """One output row: the issue's keys, means over ``scores``."""
    out: dict[str, object] = {"method": method, "dataset": dataset, "lang": lang, "n": len(scores)}
    for cols in (_PLAIN, _BUDGET):
        p = cols.prefix
        out[f"{p}answered@1"] = _mean(cols.answered(s) == 1 for s in scores)
        out[f"{p}answered@{k}"] = _mean(cols.answered(s) >= 1 for s in scores)
        out[f"{p}complete@{k}"] = _mean(cols.complete(s) for s in scores)
        out[f"{p}mrr@10"] = _mean(1 / cols.mrr(s) if cols.mrr(s) else 0.0 for s in scores)
        out[f"{p}tokens" if p else f"tokens@{k}"] = round(_mean(cols.tokens(s) for s in scores), 1)
    return out
