"""Words of a text: the Japanese analyser, English word splitting and the stopword lists.

Japanese words come from SudachiPy with sudachidict-core in split mode C. Mode C keeps
dictionary compounds whole (登録画面, 再起動, ダッシュボード): those are the terms people
type into a search box, where mode B would cut them into generic halves (登録 / 画面)
that match half the manual. Words are given in their normalised form (バッテリ →
バッテリー) so spelling variants meet. English needs no analyser: a regular expression
and a stopword list (data, below) do.

Without SudachiPy (the ``ja`` extra) Japanese falls back to character rules that need no
dictionary: content words are runs of kanji and katakana (登録画面, ダッシュボード), and
index terms are the overlapping character bigrams of those runs, the usual lexical
fallback for Japanese (Lucene's CJK analyser does the same). Which analyser made an
index's words is recorded with the index (:data:`SUDACHI_PARTS`, :data:`SUDACHI` for
indexes made before it, or :data:`BIGRAMS`), so questions are cut the way its chunks were.

Two kinds of words are made here. *Content words* (:func:`english_content_words`,
:func:`japanese_content_words`) are what the keyword representation ranks; *index
terms* (:func:`lexical_terms`) are what the lexical index
(:mod:`procedure_rag._store.lexical_index`) stores and searches: lower-cased, English
stopwords dropped, plain English words cut to their Snowball stems.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
import threading
import unicodedata
from collections.abc import Iterator
from typing import Any

import snowballstemmer

from procedure_rag._language.katakana import KATAKANA_COMPOUND, katakana_parts

__all__ = [
    "BIGRAMS",
    "ENGLISH_STOPWORDS",
    "IMPERATIVE_VERBS",
    "SUDACHI",
    "SUDACHI_PARTS",
    "default_analyser",
    "english_content_words",
    "japanese_content_words",
    "japanese_morphology",
    "japanese_tokenizer",
    "lexical_terms",
]

_LOG = logging.getLogger("procedure_rag")

#: Index terms of Japanese text from SudachiPy (split mode C, normalised forms), and the
#: known words inside a katakana compound the dictionary does not know
#: (:func:`~procedure_rag._language.katakana.katakana_parts`): what a new index records.
SUDACHI_PARTS = "sudachi+katakana-parts"
#: Index terms from SudachiPy alone (split mode C, normalised forms): indexes made before
#: :data:`SUDACHI_PARTS` keep cutting their questions so.
SUDACHI = "sudachi"
#: Index terms of Japanese text as character bigrams of its kanji and katakana runs.
BIGRAMS = "bigrams"
_ANALYSERS = (SUDACHI_PARTS, SUDACHI, BIGRAMS)

ENGLISH_STOPWORDS = frozenset(
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
# Sudachi parts of speech kept as content words (first two levels), and verbs that only
# carry grammar (する, なる, ある, いる, できる…).
_JA_KEEP_POS = frozenset({("名詞", "普通名詞"), ("名詞", "固有名詞"), ("動詞", "一般")})
_JA_LIGHT_VERBS = frozenset(
    """
    為る 成る 有る 居る 出来る 行く 来る 言う 見る 致す 成す 下さる 頂く 置く しまう よる
    つく 関する 対する 通じる 応じる 於く 付く 因る 依る
    """.split()  # noqa: SIM905 - a word list reads best as words
)
# Sudachi parts of speech kept as index terms (first level), and second levels left out.
_JA_TERM_POS = frozenset({"名詞", "動詞", "形容詞"})
_JA_TERM_SKIP_POS2 = frozenset({"数詞", "代名詞", "非自立可能"})

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")
_LATIN_TERM = re.compile(r"[a-z0-9]+(?:[._+-][a-z0-9]+)*")
# Kana and kanji. Index terms also count CJK extension A; content words never did, and
# each keeps its own range so that neither output changes.
_HAS_JA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_HAS_JA_TERM = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
# Without a dictionary: runs of kanji (with 々 and 〆) and katakana (with ー), the scripts
# Japanese nouns are written in; hiragana (particles, endings) and punctuation separate them.
_JA_RUN = re.compile(r"[\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\u3005\u3006]+")


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
                    import sudachidict_core  # noqa: F401, PLC0415 - the dictionary Dictionary(dict="core") reads
                    import sudachipy  # noqa: PLC0415 - heavy; only Japanese text needs it
                except ImportError as exc:
                    msg = (
                        "Japanese morphology (keywords, questions, lexical-index words) needs "
                        "SudachiPy and its dictionary: pip install 'procedure-rag[ja]'"
                    )
                    raise ImportError(msg) from exc
                self._dictionary = sudachipy.Dictionary(dict="core")
            import sudachipy  # noqa: PLC0415

            tok = self._dictionary.tokenizer(mode=sudachipy.SplitMode.C)
        self._local.tokenizer = tok
        return tok


_SUDACHI = _Sudachi()
_STEMMER = threading.local()


def japanese_tokenizer() -> Any:  # noqa: ANN401 - sudachipy ships no type information
    """This thread's SudachiPy tokenizer (split mode C, core dictionary)."""
    return _SUDACHI.tokenizer()


@functools.cache
def japanese_morphology() -> bool:
    """Whether SudachiPy and its core dictionary are installed (the ``ja`` extra).

    Without them Japanese keywords and index terms come from character rules; said once
    per process as a warning on the ``procedure_rag`` logger, when the first Japanese
    text needs them.
    """
    return all(importlib.util.find_spec(name) is not None for name in ("sudachipy", "sudachidict_core"))


def default_analyser() -> str:
    """The analyser a new lexical index records.

    :data:`SUDACHI_PARTS` where SudachiPy and its core dictionary (the ``ja`` extra) are
    installed, else :data:`BIGRAMS`.
    """
    return SUDACHI_PARTS if japanese_morphology() else BIGRAMS


@functools.cache
def _warn_character_rules() -> None:
    _LOG.warning(
        "SudachiPy is not installed: Japanese keywords and lexical-index words come from "
        "character rules (kanji and katakana runs); for Japanese morphology: "
        "pip install 'procedure-rag[ja]'"
    )


def english_content_words(text: str) -> Iterator[tuple[int, str]]:
    """``(position, word)`` for the English words of ``text`` that are no stopwords.

    Words shorter than three letters are left out; acronyms and mid-sentence capitals
    keep their case, other words are lowered.
    """
    for m in _WORD.finditer(text):
        word = m.group()
        low = word.lower()
        if len(word) < 3 or low in ENGLISH_STOPWORDS:
            continue
        yield m.start(), word if word.isupper() or word[1:].lower() != word[1:] else low


def japanese_content_words(text: str) -> Iterator[tuple[int, str]]:
    """``(position, normalised form)`` for the Japanese nouns and verbs of ``text`` that carry a topic.

    Latin words and numbers are left to the language-neutral rules of the caller. Without
    SudachiPy, the runs of two or more kanji and katakana that are not formal nouns
    (登録画面, 再起動, ダッシュボード), as they are written.
    """
    if not japanese_morphology():
        _warn_character_rules()
        for m in _JA_RUN.finditer(text):
            if len(m.group()) > 1 and m.group() not in _JA_STOP_NOUNS:
                yield m.start(), m.group()
        return
    pos = 0
    for m in japanese_tokenizer().tokenize(text):
        surface = m.surface()
        start = text.find(surface, pos)
        pos = start + len(surface) if start >= 0 else pos
        if not _HAS_JA.search(surface):
            continue
        tag = tuple(m.part_of_speech()[:2])
        if tag not in _JA_KEEP_POS:
            continue
        form = m.normalized_form()
        if form in _JA_LIGHT_VERBS or form in _JA_STOP_NOUNS or len(form) < 2:
            continue
        yield max(start, 0), form


def _stem(word: str) -> str:
    """The English Snowball stem of a plain word; codes and numbers stay as they are."""
    if not word.isalpha():
        return word
    return _snowball(word)


# A manual's vocabulary is small and every chunk repeats it: the pure-Python Snowball
# stemmer was most of the lexical index's cost (and of the writer's own).
@functools.lru_cache(maxsize=1 << 16)
def _snowball(word: str) -> str:
    """The Snowball stem of ``word``, remembered."""
    stemmer = getattr(_STEMMER, "english", None)
    if stemmer is None:  # one per thread: a Snowball stemmer keeps state while it works
        stemmer = _STEMMER.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def lexical_terms(text: str, analyser: str | None = None) -> list[str]:
    """The words of ``text`` the lexical index holds, in order, repeats kept.

    The text is NFKC-normalised (full-width letters and digits become ASCII); Latin
    words, numbers and codes are lower-cased, English stopwords dropped and plain words
    cut to their Snowball stems. Japanese words depend on ``analyser``, the one the index
    records (:func:`default_analyser` when ``None``): with :data:`SUDACHI` nouns, verbs
    and adjectives in their normalised form; with :data:`SUDACHI_PARTS` those, and after
    a katakana compound the dictionary does not know the known words in it
    (「プロビジョニングパッケージ」 also as 「プロビジョニング」 and 「パッケージ」, the words
    the same compound written with a space gives); with :data:`BIGRAMS` the overlapping
    character pairs of each kanji and katakana run (a one-character run is its character).

    Raises:
        ValueError: For an unknown analyser.
        ImportError: For Japanese text under a Sudachi analyser when SudachiPy is not installed.
    """
    if analyser is None:
        analyser = default_analyser()
    elif analyser not in _ANALYSERS:
        msg = f"unknown lexical analyser {analyser!r}: expected one of {', '.join(_ANALYSERS)}"
        raise ValueError(msg)
    text = unicodedata.normalize("NFKC", text)
    out = [
        _stem(word)
        for word in _LATIN_TERM.findall(text.lower())
        if word not in ENGLISH_STOPWORDS and (len(word) > 1 or word.isdigit())
    ]
    if not _HAS_JA_TERM.search(text):
        return out
    if analyser == BIGRAMS:
        if not japanese_morphology():
            _warn_character_rules()
        for run in _JA_RUN.findall(text):
            out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        return out
    if not japanese_morphology():
        msg = (
            "this lexical index's Japanese words were made with SudachiPy, which is not installed: "
            "pip install 'procedure-rag[ja]' (or build the index again without it)"
        )
        raise ImportError(msg)
    parts = analyser == SUDACHI_PARTS
    for morpheme in japanese_tokenizer().tokenize(text):
        if not _HAS_JA_TERM.search(morpheme.surface()):
            continue  # Latin words and numbers were taken above
        pos = morpheme.part_of_speech()
        if pos[0] in _JA_TERM_POS and pos[1] not in _JA_TERM_SKIP_POS2:
            form = morpheme.normalized_form()
            out.append(form)
            if parts and morpheme.is_oov() and KATAKANA_COMPOUND.fullmatch(form):
                out.extend(katakana_parts(form, _known_form))
    return out


@functools.lru_cache(maxsize=1 << 14)
def _known_form(text: str) -> str | None:
    """The normalised form of ``text`` when the dictionary has it as one word, else ``None``."""
    morphemes = list(japanese_tokenizer().tokenize(text))
    if len(morphemes) != 1 or morphemes[0].is_oov():
        return None
    return str(morphemes[0].normalized_form())
