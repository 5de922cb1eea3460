"""Model output is validated, cleaned and bounded before anything is stored.

The bounds are named: :data:`MAX_REPLY_CHARS` for a whole reply, and per kind
:data:`OUTPUT_RULES` (items per representation, characters per item). One test per
bound and per cleaning rule; then the generator: a reply with nothing valid left falls
back, a tampered cache entry is asked for again, a rate-limit error's wait is honoured.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from procedure_rag import ProcedureChunker
from procedure_rag._models.text_model import Message, ModelReply, retry_after
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.generator import LLMGenerator
from procedure_rag._representations.llm.parse import (
    MAX_REPLY_CHARS,
    OUTPUT_RULES,
    output_problem,
    parse_list,
    parse_output,
)
from procedure_rag._representations.llm.prompts import PROMPT_VERSION, build_prompt, prompt_digest
from procedure_rag._representations.types import RepresentationKind
from procedure_rag._types import Chunk

K = RepresentationKind
SOURCE = (
    "Section: Restart HoloLens 2\nIf the device is unresponsive, press and hold the Power button for "
    "15 seconds until all the indicator lights turn off, then press it again to restart."
)
SUMMARY = "Restart an unresponsive HoloLens 2 by holding the Power button for 15 seconds."
QUESTIONS = ("How do I restart a frozen HoloLens 2?", "How long do I hold the Power button?")


def parse(kind: RepresentationKind, reply: object, language: str = "en") -> tuple[str, ...]:
    return parse_output(kind, reply, source_text=SOURCE, language=language)  # type: ignore[arg-type]


# -- the size of a reply ---------------------------------------------------------------------------


def test_a_reply_up_to_the_bound_is_read() -> None:
    head = "\n".join(f"{n}. {q}" for n, q in enumerate(QUESTIONS, 1)) + "\n"
    # Unmarked lines beside a numbered list are a closing remark: read, then dropped.
    reply = head + "x" * (MAX_REPLY_CHARS - len(head))
    assert len(reply) == MAX_REPLY_CHARS
    assert parse(K.QUESTION, reply) == QUESTIONS


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("How do I restart HoloLens 2? " * 40_000, id="a-megabyte"),
        pytest.param(
            "\n".join(f"{n}. How do I restart it in case {n}?" for n in range(10_000)), id="10k-items"
        ),
        pytest.param(SUMMARY + " " * MAX_REPLY_CHARS, id="padded"),
    ],
)
def test_a_longer_reply_is_rejected_unread(reply: str) -> None:
    started = time.perf_counter()
    with pytest.raises(
        ValueError, match=rf"^question: output is {len(reply)} characters long, more than 16000"
    ):
        parse(K.QUESTION, reply)
    assert time.perf_counter() - started < 0.5


# -- items per representation and characters per item -------------------------------------------


def test_items_past_the_kind_limit_are_dropped() -> None:
    keywords = "\n".join(f"- keyword {n}" for n in range(1, 101))
    (joined,) = parse(K.KEYWORDS, keywords)
    assert joined.split(", ") == [f"keyword {n}" for n in range(1, OUTPUT_RULES[K.KEYWORDS].max_items + 1)]
    questions = "\n".join(f"{n}. How do I restart HoloLens 2 in case {n}?" for n in range(1, 51))
    assert len(parse(K.QUESTION, questions)) == OUTPUT_RULES[K.QUESTION].max_items == 8


def test_items_outside_the_length_bounds_are_dropped_the_rest_kept() -> None:
    long_question = "How do I " + "really " * 40 + "restart it?"
    reply = f"1. {QUESTIONS[0]}\n2. {long_question}\n3. Why?\n4. {QUESTIONS[1]}"
    assert len(long_question) > OUTPUT_RULES[K.QUESTION].max_chars
    assert parse(K.QUESTION, reply) == QUESTIONS


def test_too_few_valid_items_is_an_error_naming_why() -> None:
    long_question = "How do I " + "really " * 40 + "restart it?"
    with pytest.raises(
        ValueError,
        match=re.escape(f"question: item 1 is {len(long_question)} characters long, outside 5..200: ")
        + r".*\(1 valid item\(s\) left, at least 2 needed\)",
    ):
        parse(K.QUESTION, f"1. {long_question}\n2. {QUESTIONS[0]}")


def test_a_text_outside_its_bounds_is_rejected_not_cut() -> None:
    with pytest.raises(ValueError, match=r"^summary: item 1 is 401 characters long, outside 10..400"):
        parse(K.SUMMARY, "x" * 401)
    with pytest.raises(ValueError, match=r"^summary: item 1 is 9 characters long, outside 10..400"):
        parse(K.SUMMARY, "Restart 2")


# -- empty, duplicate and non-string items -----------------------------------------------------------


def test_empty_and_duplicate_items_are_dropped() -> None:
    reply = f"1. {QUESTIONS[0]}\n2.\n3. {QUESTIONS[0].upper()}\n-   \n4. {QUESTIONS[1]}\n5. {QUESTIONS[1]}"
    assert parse(K.QUESTION, reply) == QUESTIONS


def test_json_items_that_are_not_strings_are_dropped() -> None:
    reply = f'["{QUESTIONS[0]}", 5, null, true, {{"q": "What is it?"}}, ["nested"], "{QUESTIONS[1]}"]'
    assert parse(K.QUESTION, reply) == QUESTIONS
    assert parse_list('["a", 1, 2.5, null, "b"]') == ["a", "b"]


@pytest.mark.parametrize(
    ("kind", "reply", "message"),
    [
        pytest.param(K.QUESTION, "[1, 2, 3, true]", "question: item 1 is a number, not text", id="numbers"),
        pytest.param(
            K.QUESTION, '{"result": {"items": 3}}', "question: output is JSON of the wrong shape", id="object"
        ),
        pytest.param(
            K.SUMMARY, '{"summary": 5}', "summary: output is JSON of the wrong shape", id="number-field"
        ),
        pytest.param(
            K.SUMMARY,
            '{"a": "one text", "b": "another"}',
            "summary: output is JSON of the wrong shape",
            id="two-texts",
        ),
        pytest.param(
            K.QUESTION,
            f'["{QUESTIONS[0]}", "What if the dev',
            "question: output looks like JSON but does not parse",
            id="truncated-list",
        ),
        pytest.param(
            K.SUMMARY,
            '{"summary": "Restart the dev',
            "summary: output looks like JSON but does not parse",
            id="truncated",
        ),
        pytest.param(
            K.SUMMARY,
            "[" * 5000 + '"deep"' + "]" * 5000,
            "summary: output is JSON nested too deeply",
            id="deep",
        ),
        pytest.param(K.SUMMARY, None, "summary: output is a NoneType, not text", id="none"),
        pytest.param(K.SUMMARY, b"bytes reply", "summary: output is a bytes, not text", id="bytes"),
    ],
)
def test_malformed_json_and_wrong_types_are_rejected(
    kind: RepresentationKind, reply: object, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse(kind, reply)


@pytest.mark.parametrize(
    ("kind", "reply", "expected"),
    [
        pytest.param(K.SUMMARY, f'{{"summary": "{SUMMARY}"}}', (SUMMARY,), id="object-with-one-text"),
        pytest.param(K.SUMMARY, f'"{SUMMARY}"', (SUMMARY,), id="json-string"),
        pytest.param(
            K.QUESTION, f'{{"questions": ["{QUESTIONS[0]}", "{QUESTIONS[1]}"]}}', QUESTIONS, id="object"
        ),
        pytest.param(
            K.IMAGE_CAPTION,
            '{"caption": "Power button", "description": "The button on the back of the headband."}',
            ("Power button\nThe button on the back of the headband.",),
            id="caption-fields",
        ),
        pytest.param(
            K.SUMMARY,
            "[Settings] > [Update] restarts HoloLens 2 after an update is installed.",
            ("[Settings] > [Update] restarts HoloLens 2 after an update is installed.",),
            id="brackets-are-not-json",
        ),
    ],
)
def test_json_replies_of_the_right_shape_are_read(
    kind: RepresentationKind, reply: str, expected: tuple[str, ...]
) -> None:
    assert parse(kind, reply) == expected


# -- control characters and markup junk -------------------------------------------------------------

JUNK = [
    pytest.param("\x00", id="nul"),
    pytest.param("\x07", id="bell"),
    pytest.param("\x1b[31m", id="ansi-colour"),
    pytest.param("\x1b[2J", id="ansi-clear"),
    pytest.param("\x7f", id="del"),
    pytest.param("\x9b", id="c1"),
    pytest.param("\u200b", id="zero-width-space"),
    pytest.param("\u200d", id="zero-width-joiner"),
    pytest.param("\u202e", id="right-to-left-override"),
    pytest.param("\u2066", id="bidi-isolate"),
    pytest.param("\ufeff", id="bom"),
    pytest.param("\ud800", id="lone-surrogate"),
    pytest.param("\uffff", id="non-character"),
    pytest.param("<|im_end|>", id="chat-token"),
    pytest.param("</s>", id="end-of-sequence"),
    pytest.param("[INST]", id="instruction-tag"),
    pytest.param("<b>", id="html-inline"),
]


@pytest.mark.parametrize("junk", JUNK)
def test_control_characters_and_tokens_are_removed(junk: str) -> None:
    words = SUMMARY.split(" ")
    dirty = junk + " ".join(f"{word}{junk}" if n % 3 == 0 else word for n, word in enumerate(words)) + junk
    (text,) = parse(K.SUMMARY, dirty)
    assert text == SUMMARY
    questions = parse(K.QUESTION, f"1. {junk}{QUESTIONS[0]}\n2. {QUESTIONS[1]}{junk}")
    assert questions == QUESTIONS
    text.encode("utf-8")  # nothing left that cannot be stored


def test_json_escapes_cannot_smuggle_control_characters() -> None:
    reply = '["How do I \\u0000restart \\u001b[1mit?", "What is \\ud800this \\u200blight?"]'
    assert parse(K.QUESTION, reply) == ("How do I restart it?", "What is this light?")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        pytest.param(f"<think>The user wants a summary.\nDraft…</think>\n{SUMMARY}", SUMMARY, id="reasoning"),
        pytest.param(f"<THINKING>plan</THINKING>{SUMMARY}", SUMMARY, id="reasoning-upper"),
        pytest.param(f"{SUMMARY}<br/>", SUMMARY, id="html-break"),
        pytest.param(f"<p>{SUMMARY}</p>", SUMMARY, id="html-paragraph"),
        pytest.param(f"**Summary:** {SUMMARY}", SUMMARY, id="bold-label"),
        pytest.param(f"```\n{SUMMARY}\n```<|eot_id|>", SUMMARY, id="fence-and-token"),
        pytest.param(f"{SUMMARY}\r\n", SUMMARY, id="crlf"),
        pytest.param(
            "Press <Enter> when a < b, then restart HoloLens 2.",
            "Press <Enter> when a < b, then restart HoloLens 2.",
            id="angle-brackets-kept",
        ),
        pytest.param(
            "Restart\tHoloLens 2 with the Power button.",
            "Restart\tHoloLens 2 with the Power button.",
            id="tab-kept",
        ),
    ],
)
def test_markup_junk_is_removed_and_text_kept(reply: str, expected: str) -> None:
    assert parse(K.SUMMARY, reply) == (expected,)


def test_reasoning_that_never_ends_leaves_nothing() -> None:
    with pytest.raises(ValueError, match=r"^summary: empty output$"):
        parse(K.SUMMARY, f"<think>I should write {SUMMARY} but first")


def test_line_breaks_in_a_docstring_are_kept_and_blank_runs_shortened() -> None:
    reply = "Restart the device.\r\n\r\n\r\n\r\nArgs:\n    force: Skip the prompt.\u2028Returns nothing."
    assert parse(K.CODE_DOCSTRING, reply) == (
        "Restart the device.\n\nArgs:\n    force: Skip the prompt.\nReturns nothing.",
    )


# -- the check on stored (cached) outputs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "texts", "problem"),
    [
        (K.QUESTION, QUESTIONS, None),
        (K.KEYWORDS, ("HoloLens, restart",), None),
        (K.QUESTION, (), "0 texts where 1 to 8 are allowed"),
        (K.QUESTION, ("How?",) * 9, "9 texts where 1 to 8 are allowed"),
        (K.SUMMARY, (SUMMARY, SUMMARY), "2 texts where 1 to 1 are allowed"),
        (K.SUMMARY, "a str", "a str where 1 to 1 are allowed"),
        (K.SUMMARY, ("x" * 401,), "text 1 is 401 characters long, more than 400"),
        (K.SUMMARY, ("Restart\x00 it now",), "text 1 holds a control or invisible character"),
        (K.SUMMARY, (5,), "text 1 is empty or not a str"),
        (K.SUMMARY, ("   ",), "text 1 is empty or not a str"),
        (K.RAW, ("x",), "raw is not a model-generated kind"),
    ],
)
def test_output_problem(kind: RepresentationKind, texts: Sequence[object], problem: str | None) -> None:
    assert output_problem(kind, texts) == problem


# -- the generator ----------------------------------------------------------------------------------


class ScriptedModel:
    """A TextModel answering every prompt with one reply (or error); counts its calls."""

    identity = "scripted:1"
    supports_images = False

    def __init__(self, *outcomes: str | BaseException) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        outcome = self.outcomes[min(self.calls, len(self.outcomes) - 1)]
        self.calls += 1
        if isinstance(outcome, BaseException):
            raise outcome
        return ModelReply(outcome)

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        return self.complete(messages)


@pytest.fixture(scope="module")
def chunk() -> Chunk:
    text = "# Restart HoloLens 2\n\nIf the device stops responding, hold the Power button for 15 seconds.\n"
    return next(c for c in ProcedureChunker().chunk(text, source_id="restart.md") if c.level == "child")


def test_a_reply_with_nothing_valid_left_falls_back(chunk: Chunk) -> None:
    junk = "\n".join(f"{n}. {'x' * 300}" for n in range(1, 5))
    gen = LLMGenerator(ScriptedModel(junk), kinds={chunk.chunk_type: (K.QUESTION,)}, retries=1, backoff=0.001)
    reps = gen.generate([chunk])
    assert [(r.kind, r.fallback, r.generator) for r in reps] == [(K.QUESTION, True, "deterministic")] * len(
        reps
    )
    assert reps
    assert (gen.stats.calls, gen.stats.retries, gen.stats.fallbacks, gen.stats.written) == (2, 1, 1, 0)
    ((_, kind, message),) = gen.stats.failures
    assert kind == "question"
    assert "item 1 is 300 characters long" in message


@pytest.mark.parametrize(
    "stored",
    [
        pytest.param([SUMMARY, SUMMARY], id="too-many"),
        pytest.param(["x" * 5000], id="too-long"),
        pytest.param([f"{SUMMARY}\x1b[31m"], id="control-characters"),
    ],
)
def test_a_tampered_cache_entry_is_asked_for_again(chunk: Chunk, stored: list[str]) -> None:
    cache = RepresentationCache()
    kinds = {chunk.chunk_type: (K.SUMMARY,)}
    key = RepresentationCache.make_key(
        kind="summary",
        prompt_version=PROMPT_VERSION,
        model_identity=ScriptedModel.identity,
        content_digest=prompt_digest(build_prompt(chunk, K.SUMMARY)),
    )
    cache.put(key, stored)
    model = ScriptedModel(SUMMARY)
    gen = LLMGenerator(model, kinds=kinds, cache=cache)
    assert [r.text for r in gen.generate([chunk])] == [SUMMARY]
    assert (model.calls, gen.stats.cache_hits, gen.stats.written) == (1, 0, 1)
    assert cache.get(key) == (SUMMARY,)  # overwritten with the valid output


class RateLimitError(Exception):
    def __init__(self, **attributes: object) -> None:
        super().__init__("429 Too Many Requests")
        self.__dict__.update(attributes)


def _response(headers: dict[str, str]) -> SimpleNamespace:
    return SimpleNamespace(headers=headers)


@pytest.mark.parametrize(
    ("error", "seconds"),
    [
        (RateLimitError(retry_after=2), 2.0),
        (RateLimitError(retry_after="1.5"), 1.5),
        (RateLimitError(response=_response({"retry-after": "3"})), 3.0),
        (RateLimitError(response=_response({"Retry-After": "4"})), 4.0),
        (RateLimitError(response=_response({"retry-after-ms": "250", "retry-after": "9"})), 0.25),
        (RateLimitError(retry_after=-1), None),
        (RateLimitError(retry_after=True), None),
        (RateLimitError(retry_after=float("inf")), None),
        (RateLimitError(response=_response({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})), None),
        (RateLimitError(response=SimpleNamespace(headers=None)), None),
        (RuntimeError("down"), None),
    ],
)
def test_retry_after_is_read_from_the_error(error: BaseException, seconds: float | None) -> None:
    assert retry_after(error) == seconds


def test_the_generator_waits_as_long_as_a_rate_limit_asks(
    chunk: Chunk, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr("procedure_rag._representations.llm.generator.time.sleep", waits.append)
    model = ScriptedModel(RateLimitError(retry_after=7), RateLimitError(retry_after=10_000), SUMMARY)
    gen = LLMGenerator(model, kinds={chunk.chunk_type: (K.SUMMARY,)}, backoff=0.001, retries=3)
    assert [r.text for r in gen.generate([chunk])] == [SUMMARY]
    assert waits == [7.0, 60.0]  # as asked; never more than a minute
