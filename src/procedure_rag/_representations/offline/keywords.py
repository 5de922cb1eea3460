"""Keywords of a chunk: codes and numbers, UI labels, product names and content words.

Japanese content words come from SudachiPy with sudachidict-core in split mode C.
Mode C keeps dictionary compounds whole (登録画面, 再起動, ダッシュボード): those are
the terms people type into a search box, where mode B would cut them into generic
halves (登録 / 画面) that match half the manual. Words are given in their normalised
form (バッテリ → バッテリー) so spelling variants meet. English needs no analyser: a
regular expression and a stopword list (data, below) do.

Keywords are ranked by kind (codes, UI labels, product names, then words) only to
decide which survive the bound; the list comes back in order of first appearance.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from procedure_rag._language.lexicons import JAPANESE
from procedure_rag._representations.offline.summary import body_text, plain
from procedure_rag._types import Chunk

__all__ = ["IMPERATIVE_VERBS", "KEYWORD_LIMIT", "KeywordWords", "japanese_tokenizer", "keywords"]

#: Most keywords one chunk gets.
KEYWORD_LIMIT = 30

# Codes and numbers, most specific first: error codes, versions, builds, part numbers.
_CODE = re.compile(
    r"(?<![\w.])(?:"
    r"0x[0-9A-Fa-f]{4,}"  # error codes: 0x80070005
    r"|\d+(?:\.\d+){2,}"  # dotted versions and builds: 1.19050.1301.0, 10.0.19041
    r"|\d{5}\.\d+"  # builds: 19041.1103
    r"|[12]\d[HhQq][12]"  # half-year releases: 20H2, 21H1
    r"|v\d+(?:\.\d+)+"  # v2.0
    r"|[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+"  # part and model names: QUSB_BULK, HS-USB, USB-C
    r"|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"  # SM-G973F, 2FA, A12
    r")(?![\w])"
)
_URL = re.compile(r"<https?://[^>\s]+>|https?://\S+")
_FENCE_BLOCK = re.compile(r"^(```|~~~)[^\n]*\n.*?(?:^\1\s*$|\Z)", re.MULTILINE | re.DOTALL)
# A product name: capitalised words in a row, digits allowed after the first (HoloLens 2).
_PRODUCT = re.compile(
    r"\b[A-Z][\w-]*[A-Z][\w-]*(?:[ \t]+(?:\d+|[A-Z][\w-]+))*\b|\b(?:[A-Z][a-z][\w-]*[ \t]+){1,3}[A-Z][\w-]+\b"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_SENTENCE_END = re.compile(r"[。．!?！？]|\.\s|\.$")
_LABEL_MAX = 30
_HAS_JA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

_EN_STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can cannot could did didn't do does doesn't doing don't down during
    each either else etc even ever every few for from further get gets getting go goes had has have
    having he her here hers herself him himself his how however i if in into is isn't it its it's itself
    just least less let like likely may me might more most much must my myself need needs no nor not now
    of off on once one only onto or other others otherwise our ours ourselves out over own per please
    rather same see shall she should since so some such than that the their theirs them themselves then
    there these they this those though through thus to too under until up upon us use used uses using
    very via was wasn't way we well were what when where whether which while who whom whose why will
    with within without won't would yes yet you your yours yourself yourselves can't you'll you're we're
    they're following follow make makes made sure want able new first second next last also either
    ensure
    """.split()  # noqa: SIM905 - a word list reads best as words
)

#: Verbs that open English instructions and headings ("Open Device Manager", "Reset the device").
IMPERATIVE_VERBS = frozenset(
    """
    access activate add allow apply assign back block build change check choose clean clear click close
    configure confirm connect copy create delete deploy disable disconnect download edit enable enroll
    enter export find flash follow generate get go hold import install join launch log manage move open
    plan plug prepare press provision put reboot recover reflash register reinstall remove rename
    replace reset restart restore review run save search select set share show sign start stop switch
    tap troubleshoot turn type uninstall unplug update upgrade upload use verify view wait
    """.split()  # noqa: SIM905 - a word list reads best as words
)

# Nouns that carry no topic of their own (formal nouns and positions).
_JA_STOP_NOUNS = frozenset(
    """
    こと もの ため よう ところ とき 時 場合 方 方法 次 上 下 中 前 後 際 点 等 他
    以下 以上 以降 各 全て すべて 必要 可能 通り とおり 続き
    """.split()  # noqa: SIM905 - a word list reads best as words
)
# Sudachi parts of speech kept as keywords (first two levels), and verbs that only
# carry grammar (する, なる, ある, いる, できる…).
_JA_KEEP_POS = frozenset({("名詞", "普通名詞"), ("名詞", "固有名詞"), ("動詞", "一般")})
_JA_LIGHT_VERBS = frozenset(
    """
    為る 成る 有る 居る 出来る 行く 来る 言う 見る 致す 成す 下さる 頂く 置く しまう よる
    つく 関する 対する 通じる 応じる 於く 付く 因る 依る
    """.split()  # noqa: SIM905 - a word list reads best as words
)


@dataclass(frozen=True, slots=True)
class KeywordWords:
    """How keywords are found and joined in one language.

    Attributes:
        words: Yields the content words of a text (after codes, labels and products).
        joiner: Between keywords in the representation text.
    """

    words: Callable[[str], Iterator[tuple[int, str]]]
    joiner: str


class _Sudachi:
    """One SudachiPy dictionary per process, one tokenizer per thread, both made on first use.

    A Sudachi tokenizer must not be used from two threads at once; the dictionary
    may be shared.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dictionary: Any = None
        self._local = threading.local()

    def tokenizer(self) -> Any:  # noqa: ANN401 - sudachipy ships no type information
        tok = getattr(self._local, "tokenizer", None)
        if tok is not None:
            return tok
        with self._lock:
            if self._dictionary is None:
                try:
                    import sudachipy  # noqa: PLC0415 - heavy; only Japanese text needs it
                except ImportError as exc:  # pragma: no cover - a declared dependency
                    msg = "Japanese keywords need SudachiPy: pip install sudachipy sudachidict-core"
                    raise ImportError(msg) from exc
                self._dictionary = sudachipy.Dictionary(dict="core")
            import sudachipy  # noqa: PLC0415

            tok = self._dictionary.tokenizer(mode=sudachipy.SplitMode.C)
        self._local.tokenizer = tok
        return tok


_SUDACHI = _Sudachi()


def japanese_tokenizer() -> Any:  # noqa: ANN401 - sudachipy ships no type information
    """This thread's SudachiPy tokenizer (split mode C, core dictionary)."""
    return _SUDACHI.tokenizer()


def _english_words(text: str) -> Iterator[tuple[int, str]]:
    for m in _WORD.finditer(text):
        word = m.group()
        low = word.lower()
        if len(word) < 3 or low in _EN_STOPWORDS:
            continue
        # Acronyms and mid-sentence capitals keep their case; other words are lowered.
        yield m.start(), word if word.isupper() or word[1:].lower() != word[1:] else low


def _japanese_words(text: str) -> Iterator[tuple[int, str]]:
    pos = 0
    for m in japanese_tokenizer().tokenize(text):
        surface = m.surface()
        start = text.find(surface, pos)
        pos = start + len(surface) if start >= 0 else pos
        if not _HAS_JA.search(surface):
            continue  # Latin words and numbers are found by the language-neutral passes
        tag = tuple(m.part_of_speech()[:2])
        if tag not in _JA_KEEP_POS:
            continue
        form = m.normalized_form()
        if form in _JA_LIGHT_VERBS or form in _JA_STOP_NOUNS or len(form) < 2:
            continue
        yield max(start, 0), form


KEYWORD_WORDS: dict[str, KeywordWords] = {
    "ja": KeywordWords(words=_japanese_words, joiner="、"),
    "en": KeywordWords(words=_english_words, joiner=" "),
}


def keyword_words(language: str) -> KeywordWords:
    """The keyword rules of ``language`` (English for unknown languages)."""
    return KEYWORD_WORDS.get(language, KEYWORD_WORDS["en"])


def _candidates(text: str, language: str) -> Iterator[tuple[int, int, str]]:
    """``(rank, position, keyword)``: rank 0 codes, 1 UI labels, 2 products, 3 words."""
    for m in _CODE.finditer(text):
        yield 0, m.start(), m.group()
    for m in JAPANESE.ui_label.finditer(text):
        for label in plain(next((g for g in m.groups() if g), "")).split(" > "):
            if label and len(label) <= _LABEL_MAX and not _SENTENCE_END.search(label):
                yield 1, m.start(), label
    for m in _PRODUCT.finditer(text):
        words = m.group().split()
        while words and (words[0].lower() in _EN_STOPWORDS or words[0].lower() in IMPERATIVE_VERBS):
            words.pop(0)
        if words:
            yield 2, m.end() - len(" ".join(words)), " ".join(words)
    for start, word in keyword_words(language).words(text):
        yield 3, start, word


def keywords(chunk: Chunk, *, limit: int = KEYWORD_LIMIT) -> list[str]:
    """Return the chunk's keywords: at most ``limit``, no duplicates, in order of first appearance.

    Codes and numbers (0x80070005, 20H2, 1.19050.1301.0), UI labels (「保存」, [Save],
    **Save**), product names (HoloLens 2, Advanced Recovery Companion) and content
    words (Japanese via SudachiPy; English by a stopword list) all count. Link
    targets and fenced code are left out: paths and markup are not what people ask about.

    Raises:
        ImportError: For Japanese text when SudachiPy is not installed.
    """
    body = _FENCE_BLOCK.sub(" ", body_text(chunk))
    text = "\n".join((" > ".join(chunk.section_path[-2:]), _URL.sub(" ", _LINK.sub(r"\1", body))))
    best: dict[str, tuple[int, int, str]] = {}
    for rank, start, found in _candidates(text, chunk.language):
        word = found.strip(" .,:;'\"-")
        key = word.casefold()
        if not word or key in _EN_STOPWORDS:
            continue
        seen = best.get(key)
        if seen is None:
            best[key] = (rank, start, word)
        else:
            best[key] = (min(seen[0], rank), min(seen[1], start), seen[2] if seen[1] <= start else word)
    kept = sorted(best.values())[:limit]
    return [word for _, _, word in sorted(kept, key=lambda item: item[1])]
