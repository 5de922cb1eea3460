"""Code docstring: what a code block defines or runs, from the code itself.

Python is read with :mod:`ast` (functions, classes, parameters, return annotations,
docstrings, leading comments). Shell commands give their command name, subcommand
and options. Markup (XML, HTML) gives its root and element names. Anything else
gives the lines that look like signatures, and its comments.

Tree-sitter would parse more languages, but its language pack fetches grammars at run
time (no network here) and single-grammar wheels each add a dependency for languages
the manuals rarely hold; the signature-line fallback covers what they do hold.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from procedure_rag._language.lexicons import by_language
from procedure_rag._representations.offline.summary import body_text, clip, plain
from procedure_rag._types import Chunk, ChunkType

__all__ = ["CodeBlock", "CodeWords", "code_blocks", "code_docstring", "has_code"]

_FENCE = re.compile(r"^\s*(```|~~~)\s*(\S*)[^\n]*$")
_SHELL_LANGS = frozenset(
    {"console", "shell", "sh", "bash", "zsh", "cmd", "bat", "powershell", "ps", "ps1", "pwsh"}
)
_MARKUP_LANGS = frozenset({"xml", "html", "xhtml", "svg", "plist"})
_PROMPT = re.compile(r"^\s*(?:[A-Za-z]:\\[^>\n]*>|PS [^>\n]*>|\$\s|#\s(?=\w)|>\s)")
_SIGNATURE = re.compile(
    r"^\s*(?:(?:export|public|private|protected|static|async|abstract|final|override|pub|inline)\s+)*"
    r"(?:def|class|function|func|fn|interface|struct|enum|trait|impl|module|type|sub|procedure|"
    r"CREATE\s+(?:TABLE|VIEW|FUNCTION|PROCEDURE)|[\w<>\[\],]+\s+\w+\s*\([^;{]*\)\s*\{?\s*$)",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"^\s*(?:#|//|--|;|/\*|\*|<!--|REM\b|::)\s*(?P<text>.*?)\s*(?:\*/|-->)?\s*$")
_XML_COMMENT = re.compile(r"<!--\s*(.*?)\s*-->", re.DOTALL)
_XML_TAG = re.compile(r"<([A-Za-z_][\w.:-]*)")
# Flags that say where a command acts, not what it does (DISM's /online, /image…).
_CONTEXT_FLAGS = frozenset({"online", "image", "quiet", "norestart", "english", "loglevel", "logpath"})
_MAX_ITEMS = 12


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One code block: its language (from the fence or a guess) and its text."""

    language: str
    code: str


@dataclass(frozen=True, slots=True)
class CodeWords:
    """How a code docstring is worded in one language."""

    command: str
    options: str
    function: str
    klass: str
    markup: str
    comments: str
    code: str
    join: str


CODE_WORDS: dict[str, CodeWords] = {
    "ja": CodeWords(
        command="{name} コマンド: {action}",
        options="（オプション: {options}）",
        function="関数 {signature}",
        klass="クラス {name}",
        markup="{language}: ルート要素 {root}、要素 {elements}",
        comments="コメント: {comments}",
        code="{language} コード（{where}）",
        join="。",
    ),
    "en": CodeWords(
        command="{name} command: {action}",
        options=" with {options}",
        function="function {signature}",
        klass="class {name}",
        markup="{language}: root element {root}; elements {elements}",
        comments="Comments: {comments}",
        code="{language} code ({where})",
        join=". ",
    ),
}


def has_code(chunk: Chunk) -> bool:
    """Whether the chunk's text holds a fenced code block."""
    return any(_FENCE.match(line) for line in chunk.text.splitlines())


def code_blocks(text: str, *, starts_inside: bool = False) -> list[CodeBlock]:
    """The fenced code blocks of ``text``.

    Args:
        text: Markdown text.
        starts_inside: The text begins inside a block, as a chunk that continues a
            split code block does (it may end with the closing fence, or not at all).
    """
    blocks: list[CodeBlock] = []
    current: list[str] | None = [] if starts_inside else None
    language = ""
    lines = text.splitlines()
    for line in lines:
        fence = _FENCE.match(line)
        if fence is None:
            if current is not None:
                current.append(line)
            continue
        if current is None:
            current, language = [], fence.group(2).lower()
        else:
            blocks.append(CodeBlock(language or _guess(current), "\n".join(current)))
            current, language = None, ""
    if current and any(x.strip() for x in current):
        blocks.append(CodeBlock(language or _guess(current), "\n".join(current)))
    return blocks


def _guess(lines: list[str]) -> str:
    head = next((x.strip() for x in lines if x.strip()), "")
    if head.startswith("<"):
        return "xml"
    if _PROMPT.match(head):
        return "console"
    if re.match(r"(?:def|class|import|from)\s", head):
        return "python"
    return ""


def _python(code: str, words: CodeWords) -> list[str]:
    tree = ast.parse(code)
    out = [m.group("text") for line in code.splitlines()[:5] if (m := _COMMENT.match(line)) and line.strip()]
    doc = ast.get_docstring(tree)
    if doc:
        out.append(doc.splitlines()[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params = ", ".join(
                a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            )
            ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            out.append(words.function.format(signature=f"{node.name}({params}){ret}"))
        elif isinstance(node, ast.ClassDef):
            out.append(words.klass.format(name=node.name))
        else:
            continue
        doc = ast.get_docstring(node)
        if doc:
            out.append(doc.splitlines()[0])
    return out


def _option_name(token: str) -> str:
    return token.split(":", 1)[0].split("=", 1)[0]


def _shell(code: str, words: CodeWords) -> list[str]:
    out: list[str] = []
    for raw in code.splitlines():
        line = _PROMPT.sub("", raw).strip()
        if not line or _COMMENT.match(raw):
            continue
        try:
            tokens = shlex.split(line, posix=False)
        except ValueError:
            tokens = line.split()
        name = re.sub(r"\.(?:exe|cmd|bat|ps1)$", "", re.split(r"[\\/]", tokens[0])[-1], flags=re.IGNORECASE)
        args = tokens[1:]
        # The action: DISM-style /Verb without a value, else the first plain argument (git *commit*).
        flags = [t for t in args if t[:1] == "/" and not re.search(r"[:=]", t)]
        action = next((f for f in flags if f.lstrip("-/").lower() not in _CONTEXT_FLAGS), "")
        action = action.lstrip("-/") or next((t for t in args if t[:1] not in "-/\"'"), "")
        options = [
            o
            for o in dict.fromkeys(_option_name(t) for t in args if t[:1] in "-/")
            if o.lstrip("-/") != action
        ]
        text = words.command.format(
            name=name.upper() if name.islower() and len(name) <= 5 else name, action=action
        )
        if options:
            text += words.options.format(options=", ".join(options[:_MAX_ITEMS]))
        out.append(text.rstrip(": "))
    return out


def _markup(code: str, language: str, words: CodeWords) -> list[str]:
    tags = [t for t in _XML_TAG.findall(code) if t.lower() != "xml"]
    out: list[str] = []
    if tags:
        elements = ", ".join(list(dict.fromkeys(tags[1:]))[:_MAX_ITEMS])
        out.append(words.markup.format(language=language.upper(), root=tags[0], elements=elements))
    comments = [plain(c) for c in _XML_COMMENT.findall(code)][:_MAX_ITEMS]
    if comments:
        out.append(words.comments.format(comments="; ".join(comments)))
    return out


def _signatures(code: str, words: CodeWords) -> list[str]:
    lines = code.splitlines()
    sigs = [x.strip().rstrip("{").strip() for x in lines if _SIGNATURE.match(x)][:_MAX_ITEMS]
    comments = [m.group("text") for x in lines if (m := _COMMENT.match(x)) and m.group("text")][:_MAX_ITEMS]
    out = sigs + ([words.comments.format(comments="; ".join(comments))] if comments else [])
    return out or [" ".join(x.strip() for x in lines if x.strip())[:200]]


_READERS: dict[str, Callable[[str, CodeWords], list[str]]] = {
    **dict.fromkeys(("python", "py", "python3"), _python),
    **dict.fromkeys(_SHELL_LANGS, _shell),
}


def _describe(block: CodeBlock, words: CodeWords) -> list[str]:
    if block.language in _MARKUP_LANGS:
        return _markup(block.code, block.language, words)
    reader = _READERS.get(block.language)
    if reader is not None:
        try:
            return reader(block.code, words)
        except SyntaxError:
            pass  # a snippet that does not parse still has signature lines
    return _signatures(block.code, words)


def code_docstring(chunk: Chunk) -> str:
    """Return a docstring-like description of the chunk's code.

    Names the language and the section the code sits in, then what each block
    defines or runs. Returns "" for a chunk without code.
    """
    words = by_language(CODE_WORDS, chunk.language)
    text = body_text(chunk)
    if chunk.chunk_type is not ChunkType.CODE and not has_code(chunk):
        return ""
    first = next((line for line in text.splitlines() if line.strip()), "")
    blocks = code_blocks(text, starts_inside=chunk.chunk_type is ChunkType.CODE and not _FENCE.match(first))
    if not blocks:
        return ""
    where = " > ".join(chunk.section_path[-2:])
    languages = ", ".join(dict.fromkeys(b.language or "code" for b in blocks))
    parts = [words.code.format(language=languages, where=where) if where else languages]
    for block in blocks:
        parts.extend(_describe(block, words))
    return clip(words.join.join(dict.fromkeys(p for p in parts if p)), 600, words=False)
