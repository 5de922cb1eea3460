"""LlamaIndex node parser over the procedure-rag chunker."""

from __future__ import annotations

import difflib
import itertools
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from llama_index.core.bridge.pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)
from llama_index.core.node_parser import NodeParser
from llama_index.core.node_parser.node_utils import default_id_func
from llama_index.core.schema import BaseNode, Document, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.utils import get_tokenizer, get_tqdm_iterable

from procedure_rag import (
    DEFAULT_DROP_KINDS,
    STRUCTURAL_KEYS,
    ChunkerOptions,
    ChunkLevel,
    ElementKind,
    ProcedureChunker,
    chunk_metadata,
    read_metadata,
)
from procedure_rag._core_api import (
    DEFAULT_MAX_INPUT_CHARS,
    DEFAULT_MAX_JSON_DEPTH,
    DocumentChunk,
    RecordGroup,
    RunningLineMemory,
    SourceIds,
    is_chunk_metadata,
    iter_document_chunks,
    iter_record_groups,
    ordinary_first,
)

if TYPE_CHECKING:
    import tiktoken

__all__ = ["ProcedureNodeParser"]

#: Document metadata keys that identify a document, in order of preference:
#: ``source`` is what the LangChain adapter reads, ``file_path`` what
#: ``SimpleDirectoryReader`` writes.
_SOURCE_KEYS = ("source", "file_path")

#: The heading path opens every chunk's text, so ``section`` would only repeat it
#: in the embedding; the LLM keeps it as a labelled field a prompt can cite.
_EMBED_EXCLUDED = STRUCTURAL_KEYS
_LLM_EXCLUDED = tuple(key for key in STRUCTURAL_KEYS if key != "section")
#: With the source text, the heading path and lead-in reach the embedding as metadata.
_SOURCE_EMBED_EXCLUDED = tuple(key for key in STRUCTURAL_KEYS if key not in ("section", "lead_in"))


def _is_generated_id(node_id: str) -> bool:
    """Whether ``node_id`` looks like LlamaIndex's default random id (a UUID4)."""
    try:
        parsed = uuid.UUID(node_id)
    except ValueError:
        return False
    return parsed.version == 4 and str(parsed) == node_id


def _source_id(node: BaseNode) -> str | None:
    """Return the id the core derives chunk ids from, stable across runs.

    LlamaIndex gives every document a fresh random UUID unless the user chose one
    (``doc_id=...``, ``filename_as_id=True``); a random id would change every chunk
    id on every run and defeat re-indexing. So a chosen id wins, as it is the
    document's identity in LlamaIndex's docstore; then a document's ``source`` or
    ``file_path`` metadata; otherwise ``None``, and the core hashes the text.
    Metadata is read from documents only: the nodes of one document share it.
    """
    if not _is_generated_id(node.node_id):
        return node.node_id
    if isinstance(node, Document):
        for key in _SOURCE_KEYS:
            value = node.metadata.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _element_metadata(node: BaseNode) -> dict[str, Any]:
    """An element node's metadata, with its id as ``element_id`` when the reader chose it."""
    if "element_id" in node.metadata or _is_generated_id(node.node_id):
        return node.metadata
    return {**node.metadata, "element_id": node.node_id}


def _merged(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


class ProcedureNodeParser(NodeParser):
    """Split documents into procedure-block nodes and, optionally, their parents.

    Children are blocks of steps that keep a condition with the steps it governs;
    parents group a section or a run of children. Relationships follow
    ``HierarchicalNodeParser``: ``PARENT``/``CHILD`` between the levels (so
    ``get_leaf_nodes``, ``get_root_nodes`` and ``AutoMergingRetriever`` work),
    ``PREVIOUS``/``NEXT`` between neighbours of the same level of one document,
    ``SOURCE`` to the input's document. A relationship between two nodes names the
    related node by id, type and hash, without its metadata (which LlamaIndex never
    reads there, and which would be kept and stored once more per relationship).

    Node ids are the core's stable chunk ids, so ``id_func`` must stay the default.
    They are unique per document position in one call: a document with no id of its
    own, no ``source`` and no ``file_path`` that repeats an earlier one's text gets its
    own source id (``sha1:…#2``); the same documents give the same ids on every run.
    Options are validated when the parser is built and cannot be changed after.

    Nodes that are single Unstructured elements (metadata ``category``, as from an
    Unstructured reader that splits by element) are read together: each run of them
    from one file (``source``/``file_path``/``filename``) is one document whose nodes
    carry pages and boxes and the metadata the run shares; their ``SOURCE`` is the
    run's first node's source. Page documents of one file (``SimpleDirectoryReader``'s
    PDF reader: ``page_label`` and ``file_path``; ``page_number``) are read together in
    page order, so that a procedure crossing a page break stays whole: each node
    carries the metadata of the page it starts on with ``page`` (1-based) and
    ``pages``, that page is its ``SOURCE``, and ``start_char_idx`` is an offset into
    its text (``end_char_idx`` too, or ``None`` when the node ends on a later page).
    The source id of such a run is its file. Other nodes are parsed one by one.

    ``text_mode="source"`` makes a node's text the exact slice of its document's text
    it stands for, so that ``text[start_char_idx:end_char_idx] == node.text`` (but
    that a NUL of a PDF's extracted text, a glyph without a character, shows as
    U+FFFD in either mode); its
    section path and lead-in are then metadata that the embedding sees
    (``section``, ``lead_in`` are not excluded from it). With the rendered text (the
    default: section path and lead-in first, steps renumbered as shown)
    ``start_char_idx`` is the offset of the first source character the node covers
    and ``end_char_idx`` where its last one ends. A
    node's text is what gets read, never a path in its metadata; with
    ``source_format="auto"`` a ``source_format`` metadata key names the format, else
    the text tells it, the suffix of ``source``/``file_path`` only confirming it
    (``.pdf``, ``.docx``: extracted text; ``.md``, ``.html``, ``.rst``: that markup
    when the text is such markup).

    Raises:
        ValueError: On construction, for options the core rejects (the message is
            the core's, e.g. ``chunk_size must be > 0, got 0``), or a custom ``id_func``.
        pydantic.ValidationError: For an unknown keyword argument, as with pydantic's
            ``extra="forbid"`` (the message names it and the closest option:
            ``unknown argument 'chunk_sizee' (did you mean 'chunk_size'?)``).

    """

    # A misspelt option would otherwise be dropped silently (NodeParser ignores extras).
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    chunk_size: int = Field(default=400, frozen=True, description="Token budget of a child node.")
    language: str = Field(default="auto", frozen=True, description='"ja", "en" or "auto".')
    source_format: str = Field(
        default="auto",
        frozen=True,
        description='How whole-text nodes are read: "markdown", "text", "html", "rst" or "auto".',
    )
    text_mode: Literal["rendered", "source"] = Field(
        default="rendered",
        frozen=True,
        description='"rendered" (section path and lead-in in the text) or "source" (the exact source slice).',
    )
    emit_parents: bool = Field(
        default=False,
        frozen=True,
        description="Whether parent nodes are emitted besides the children (off, as in LangChain).",
    )
    parent_chunk_size: int | None = Field(
        default=None, frozen=True, description="Token budget of a parent; None means four child budgets."
    )
    max_children_per_parent: int = Field(
        default=8, frozen=True, description="Most children one parent groups."
    )
    drop_kinds: list[str] = Field(
        default_factory=lambda: sorted(kind.value for kind in DEFAULT_DROP_KINDS),
        frozen=True,
        description="Layout element kinds (ElementKind values) left out of nodes.",
    )
    max_input_chars: int | None = Field(
        default=DEFAULT_MAX_INPUT_CHARS,
        frozen=True,
        description="Most characters one document may have; None means no limit.",
    )
    max_json_depth: int | None = Field(
        default=DEFAULT_MAX_JSON_DEPTH,
        frozen=True,
        description="Deepest nesting of a parser's JSON output given as text; None means no limit.",
    )
    combine_small_sections: bool | None = Field(
        default=None,
        frozen=True,
        description=(
            "Whether consecutive small sections of one parent are chunked as one: None combines "
            "them under headings inferred from the print (an untagged PDF's fonts, page texts), "
            "True everywhere, False nowhere."
        ),
    )
    tokenizer: Callable[[str], list[Any]] | None = Field(
        default=None,
        frozen=True,
        exclude=True,
        description="Tokenizer measuring the budgets; None means LlamaIndex's global tokenizer.",
    )
    id_func: Callable[..., str] = Field(
        default=default_id_func,
        exclude=True,
        description="Unused: node ids are the core's stable chunk ids.",
    )

    _chunker: ProcedureChunker = PrivateAttr()

    @classmethod
    def class_name(cls) -> str:
        """Name used as the key when the parser is serialised."""
        return "ProcedureNodeParser"

    @model_validator(mode="before")
    @classmethod
    def _refuse_unknown(cls, data: Any) -> Any:  # noqa: ANN401 - pydantic hands raw input over
        if not isinstance(data, dict):
            return data
        # ``class_name`` is what to_dict() adds; from_dict() drops it, other loaders may not.
        data = {key: value for key, value in data.items() if key != "class_name"}
        unknown = [key for key in data if key not in cls.model_fields]
        if unknown:
            raise ValueError("; ".join(_unknown_message(str(key), cls.model_fields) for key in unknown))
        return data

    @field_validator("drop_kinds", mode="after")
    @classmethod
    def _normalise_drop_kinds(cls, value: list[str]) -> list[str]:
        # One spelling per set of kinds, so equal parsers hash equal in a pipeline cache.
        return sorted(set(value))

    @field_validator("id_func", mode="before")
    @classmethod
    def _check_id_func(cls, value: object) -> Callable[..., str]:
        if value is None or value is default_id_func:
            return default_id_func
        msg = "id_func is not supported: node ids are procedure_rag's stable chunk ids"
        raise ValueError(msg)

    @model_validator(mode="after")
    def _build_chunker(self) -> ProcedureNodeParser:
        kinds = {kind.value: kind for kind in ElementKind}
        options = ChunkerOptions(
            chunk_size=self.chunk_size,
            length_function=_TokenCount(self.tokenizer or get_tokenizer()),
            language=self.language,
            source_format=self.source_format,
            emit_parents=self.emit_parents,
            parent_chunk_size=self.parent_chunk_size,
            max_children_per_parent=self.max_children_per_parent,
            # Unknown names go through as they are so that the core reports them.
            drop_kinds=frozenset(kinds.get(name, cast(ElementKind, name)) for name in self.drop_kinds),
            max_input_chars=self.max_input_chars,
            max_json_depth=self.max_json_depth,
            combine_small_sections=self.combine_small_sections,
        )
        self._chunker = ProcedureChunker(options)
        return self

    @property
    def options(self) -> ChunkerOptions:
        """The validated core options."""
        return self._chunker.options

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: object
    ) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        items = get_tqdm_iterable(nodes, show_progress, "Parsing nodes")
        sources = SourceIds()
        running = RunningLineMemory()
        for is_chunk, run in itertools.groupby(items, key=lambda node: is_chunk_metadata(node.metadata)):
            if is_chunk:  # already our chunks (a ProcedureReader's documents): passed through
                parsed.extend(_passed_through(list(run), include_prev_next=self.include_prev_next_rel))
                continue
            for group in iter_record_groups(run, metadata=lambda node: node.metadata):
                parsed.extend(self._nodes_of(group, sources, running))
        return parsed

    def file_documents(
        self, path: Path, *, extra_info: Mapping[str, Any] | None = None, source_format: str = "auto"
    ) -> Iterator[Document]:
        """Yield one ``Document`` per chunk of the file at ``path``, read by its own reader.

        What :class:`~llama_index_procedures.ProcedureReader` gives for one file: each
        document's id is the chunk's, its metadata ``extra_info`` (``SimpleDirectoryReader``'s
        ``file_path``, ``file_name``…; else ``file_path``) then the structural keys, kept out
        of the embedding and the LLM's view as the nodes' are. This parser passes such
        documents through as nodes, parents and children linked.

        Raises:
            FileNotFoundError: When ``path`` does not exist.
            ValueError: When the file cannot be read (the message names it) or
                ``source_format`` is unknown.
        """
        info = dict(extra_info) if extra_info else {"file_path": str(path)}
        for chunk in self._chunker.iter_chunks_from_source(
            path, source_id=str(path), source_format=source_format
        ):
            yield Document(
                id_=chunk.chunk_id,
                text=chunk.text,
                metadata=chunk_metadata(chunk, info),
                excluded_embed_metadata_keys=list(_EMBED_EXCLUDED),
                excluded_llm_metadata_keys=list(_LLM_EXCLUDED),
            )

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        # The base class re-finds each node's text in its document (ours opens with
        # a heading path, and the core's spans are exact), merges metadata (done in
        # ``_nodes_of``) and chains PREVIOUS/NEXT through the flat list, which would
        # link children to parents. Everything is already in place.
        return nodes

    def _nodes_of(
        self, group: RecordGroup[BaseNode], sources: SourceIds, running: RunningLineMemory
    ) -> list[TextNode]:
        """Return the nodes of one input node (or run of element or page nodes), relationships set.

        ``sources`` gives the group its source id, unique per position in the input list;
        ``running`` the running lines of the list's page runs so far.
        """
        documents = [
            (n.get_content(), _element_metadata(n) if group.kind == "elements" else n.metadata)
            for n in group.items
        ]
        named = group.source if group.kind != "text" else _source_id(group.items[0])
        chunks = iter_document_chunks(
            self._chunker,
            group.kind,
            documents,
            metadata=group.metadata,
            source_id=sources(named, [text for text, _ in documents]),
            running=running,
        )
        # Each chunk is let go once its node is built; only its place in the tree is kept.
        built: dict[str, TextNode] = {}
        links: list[tuple[str, ChunkLevel, str | None, tuple[str, ...]]] = []
        for part in chunks:
            c = part.chunk
            built[c.chunk_id] = self._text_node(part, group.items[part.document])
            links.append((c.chunk_id, c.level, c.parent_id, c.child_ids))
        _link_tree(built, links, prev_next=self.include_prev_next_rel)
        return list(built.values())

    def _text_node(self, part: DocumentChunk, node: BaseNode) -> TextNode:
        """The node of one chunk; ``node`` is the input node it starts in (its ``SOURCE``)."""
        chunk = part.chunk
        # ``text_template`` lives on TextNode and Document, not on BaseNode.
        text_template = getattr(node, "text_template", None)
        templates = {"text_template": text_template} if isinstance(text_template, str) else {}
        source = self.text_mode == "source" and part.source_text is not None
        text = part.source_text if source and part.source_text is not None else chunk.text
        start = part.source_start if source else part.start
        end = (None if start is None else start + len(text)) if source else part.end
        return TextNode(
            id_=chunk.chunk_id,
            text=text,
            metadata=chunk_metadata(chunk, part.metadata if self.include_metadata else None),
            # Each node owns its lists, as when every node merged them itself.
            excluded_embed_metadata_keys=_merged(
                node.excluded_embed_metadata_keys, _SOURCE_EMBED_EXCLUDED if source else _EMBED_EXCLUDED
            ),
            excluded_llm_metadata_keys=_merged(node.excluded_llm_metadata_keys, _LLM_EXCLUDED),
            metadata_separator=node.metadata_separator,
            metadata_template=node.metadata_template,
            start_char_idx=start,
            end_char_idx=end,
            relationships={NodeRelationship.SOURCE: node.source_node or node.as_related_node_info()},
            **templates,
        )


#: A chunk's place in its document's tree: id, level, parent id, child ids.
_Link = tuple[str, ChunkLevel, str | None, tuple[str, ...]]


def _link_tree(built: Mapping[str, TextNode], links: Sequence[_Link], *, prev_next: bool) -> None:
    """Link the nodes of one document (``built``, by chunk id; ``links`` in reading order).

    Parents name their children (``CHILD``) and children their parent (``PARENT``), where
    the node named is in ``built``; with ``prev_next``, the nodes of each level are chained
    by ``PREVIOUS``/``NEXT``.
    """
    related = _RelatedInfo()
    for chunk_id, level, parent_id, child_ids in links:
        if level is ChunkLevel.PARENT:
            children = [related(built[child_id]) for child_id in child_ids if child_id in built]
            if children:
                built[chunk_id].relationships[NodeRelationship.CHILD] = children
        elif parent_id is not None and parent_id in built:
            built[chunk_id].relationships[NodeRelationship.PARENT] = related(built[parent_id])
    if prev_next:
        for kind in ChunkLevel:
            _link_neighbours([built[cid] for cid, level, _, _ in links if level is kind], related)


def _passed_through(nodes: Sequence[BaseNode], *, include_prev_next: bool) -> list[TextNode]:
    """Nodes of documents that already are our chunks: same ids, text and metadata (copied).

    Each names its document as ``SOURCE``; the nodes of each source are linked as the
    parser links its own (:func:`_link_tree`), by the ``parent_id`` and ``child_ids``
    their metadata records.
    """
    out: list[TextNode] = []
    by_source: dict[str, tuple[dict[str, TextNode], list[_Link]]] = {}
    for node in nodes:
        meta = read_metadata(node.metadata)
        chunk_id = str(meta["chunk_id"])
        text_node = TextNode(
            id_=chunk_id,
            text=node.get_content(),
            metadata=dict(node.metadata),
            excluded_embed_metadata_keys=_merged(node.excluded_embed_metadata_keys, _EMBED_EXCLUDED),
            excluded_llm_metadata_keys=_merged(node.excluded_llm_metadata_keys, _LLM_EXCLUDED),
            relationships={NodeRelationship.SOURCE: node.as_related_node_info()},
        )
        out.append(text_node)
        built, links = by_source.setdefault(str(meta["source_id"]), ({}, []))
        built[chunk_id] = text_node
        parent_id = str(meta.get("parent_id") or "") or None
        links.append((chunk_id, ChunkLevel(meta["chunk_level"]), parent_id, tuple(meta.get("child_ids", ()))))
    for built, links in by_source.values():
        _link_tree(built, links, prev_next=include_prev_next)
    return out


def _unknown_message(key: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return f"unknown argument {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


class _TokenCount:
    """A length function counting a tokenizer's tokens; picklable when the tokenizer is.

    (A lambda here would make the parser unpicklable, which ``IngestionPipeline``
    needs for ``num_workers > 1``.)
    """

    def __init__(self, tokenizer: Callable[[str], list[Any]]) -> None:
        self.tokenizer = tokenizer
        encoding = _default_encoding(tokenizer)
        self._count = self._tokenized if encoding is None else ordinary_first(encoding, self._tokenized)

    def __call__(self, text: str) -> int:
        return self._count(text)

    def _tokenized(self, text: str) -> int:
        return len(self.tokenizer(text))

    def __getstate__(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["tokenizer"])  # type: ignore[misc]


def _default_encoding(tokenizer: Callable[[str], list[Any]]) -> tiktoken.Encoding | None:
    """The tiktoken encoding of ``tokenizer`` when it is LlamaIndex's default, else ``None``.

    The default is ``partial(encoding.encode, allowed_special="all")``: on a text holding
    no special token it gives what ``encode_ordinary`` gives (see
    :func:`procedure_rag._chunking.lengths.ordinary_first`).
    """
    call: partial[list[Any]] | None = tokenizer if isinstance(tokenizer, partial) else None
    if call is None or call.args or call.keywords != {"allowed_special": "all"}:
        return None
    try:
        import tiktoken  # noqa: PLC0415 - only to recognise the default tokenizer
    except ImportError:  # pragma: no cover - llama-index-core depends on tiktoken
        return None
    encoding = getattr(call.func, "__self__", None)
    if (
        not isinstance(encoding, tiktoken.Encoding)
        or getattr(call.func, "__func__", None) is not tiktoken.Encoding.encode
    ):
        return None
    return encoding


class _RelatedInfo:
    """A node as the ``RelatedNodeInfo`` another node of its document names it by.

    It holds the node's id, type and hash, not its metadata: nothing in LlamaIndex
    reads a relationship's metadata (``AutoMergingRetriever``, the prev/next
    postprocessors and the docstore follow ``node_id``; in ``SentenceSplitter``'s
    nodes ``NEXT`` holds the next node's metadata from before the document's was
    merged in, i.e. none), while ours, with steps as JSON, would be copied into every
    relationship of every node and stored again with each node in a docstore or a
    vector store's node content. ``SOURCE`` still names the input document as
    LlamaIndex's parsers do, metadata included.

    A node is named by up to three relationships (its parent's ``CHILD``, its
    neighbours' ``PREVIOUS``/``NEXT``, its children's ``PARENT``), and its hash (text
    and metadata through SHA-256) does not change while relationships are set, so it
    is computed once. Each call gives a new ``RelatedNodeInfo``, as LlamaIndex's
    ``as_related_node_info`` does.
    """

    def __init__(self) -> None:
        self._hashes: dict[str, str] = {}

    def __call__(self, node: TextNode) -> RelatedNodeInfo:
        digest = self._hashes.get(node.node_id)
        if digest is None:
            digest = self._hashes[node.node_id] = node.hash
        return RelatedNodeInfo(node_id=node.node_id, node_type=node.get_type(), metadata={}, hash=digest)


def _link_neighbours(
    nodes: Sequence[TextNode], related: Callable[[TextNode], RelatedNodeInfo] | None = None
) -> None:
    """Chain ``nodes`` (one level of one document, in reading order) with PREVIOUS/NEXT."""
    info = related or _RelatedInfo()
    for prev, nxt in pairwise(nodes):
        prev.relationships[NodeRelationship.NEXT] = info(nxt)
        nxt.relationships[NodeRelationship.PREVIOUS] = info(prev)
