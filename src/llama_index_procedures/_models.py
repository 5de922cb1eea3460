"""``LlamaIndexModel``: any LlamaIndex ``LLM`` as the core's ``TextModel``.

The wrapper translates, nothing more: core :class:`~procedure_rag.Message`s become
``ChatMessage``s whose ``blocks`` are a ``TextBlock`` and one ``ImageBlock`` per image,
and the ``ChatResponse`` becomes a :class:`~procedure_rag.ModelReply`. Batching,
retries, caching and fallback stay in :class:`~procedure_rag.LLMGenerator`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ContentBlock,
    ImageBlock,
    MessageRole,
    TextBlock,
)
from llama_index.core.llms import LLM

from procedure_rag import ImagePart, Message, ModelReply

__all__ = ["LlamaIndexModel"]

_ROLES = {"system": MessageRole.SYSTEM, "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}

#: Token-count keys as providers spell them: OpenAI-style integrations put
#: ``prompt_tokens``/``completion_tokens`` in ``additional_kwargs`` and in the raw
#: response's ``usage``; others use ``input_tokens``/``output_tokens``.
_USAGE_KEYS = (("prompt_tokens", "completion_tokens"), ("input_tokens", "output_tokens"))

#: ``LLMMetadata.model_name`` when the integration does not set it.
_UNKNOWN_MODEL = "unknown"


class LlamaIndexModel:
    """A LlamaIndex ``LLM`` as a ``TextModel``: ``complete`` is ``chat``, ``acomplete`` is ``achat``.

    Args:
        llm: Any LlamaIndex LLM.
        identity: The model's stable name in the representation cache key. ``None``
            uses ``"<class name>:<metadata.model_name>"``, or the class name alone when
            the integration leaves the model name unset.
        supports_images: Whether image caption prompts carry the images an
            ``image_loader`` gives. ``None`` takes ``llm.metadata.is_multi_modal`` when the
            integration declares it (llama-index-core 0.14's ``LLMMetadata`` no longer
            has the field), else True, as chat messages take ``ImageBlock`` items and images
            are only ever sent when the generator was given an ``image_loader``.

    Raises:
        ValueError: When ``identity`` is an empty string.

    """

    def __init__(self, llm: LLM, *, identity: str | None = None, supports_images: bool | None = None) -> None:
        if identity == "":
            msg = "identity must be a non-empty string or None"
            raise ValueError(msg)
        self.llm = llm
        self.identity: str = identity or _identity(llm)
        self.supports_images: bool = _declares_images(llm) if supports_images is None else supports_images

    def __repr__(self) -> str:
        return f"LlamaIndexModel(identity={self.identity!r}, supports_images={self.supports_images})"

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        """Send ``messages`` with ``chat`` and return the reply's text and token usage."""
        return _reply(self.llm.chat(to_chat_messages(messages)))

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        """Send ``messages`` with ``achat`` and return the reply's text and token usage."""
        return _reply(await self.llm.achat(to_chat_messages(messages)))


def to_chat_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """Translate core messages into ``ChatMessage``s with text and image blocks.

    Raises:
        ValueError: For a role other than ``system``, ``user`` or ``assistant``.

    """
    return [_message(m) for m in messages]


def _message(message: Message) -> ChatMessage:
    role = _ROLES.get(message.role)
    if role is None:
        msg = f"unknown message role {message.role!r}; expected one of {sorted(_ROLES)}"
        raise ValueError(msg)
    blocks: list[ContentBlock] = [TextBlock(text=message.text), *(_image_block(i) for i in message.images)]
    return ChatMessage(role=role, blocks=blocks)


def _image_block(image: ImagePart) -> ImageBlock:
    if image.data is not None:
        return ImageBlock(image=image.data, image_mimetype=image.mime_type)
    if image.url is not None:
        return ImageBlock(url=image.url, image_mimetype=image.mime_type)
    msg = "an ImagePart needs data or a url"
    raise ValueError(msg)


def _reply(response: ChatResponse) -> ModelReply:
    input_tokens, output_tokens = _usage(response)
    return ModelReply(
        text=response.message.content or "", input_tokens=input_tokens, output_tokens=output_tokens
    )


def _usage(response: ChatResponse) -> tuple[int | None, int | None]:
    """Token counts from ``additional_kwargs``, else the raw response's ``usage``."""
    for source in (response.additional_kwargs, _field(response.raw, "usage")):
        for input_key, output_key in _USAGE_KEYS:
            input_tokens, output_tokens = _field(source, input_key), _field(source, output_key)
            if isinstance(input_tokens, int) or isinstance(output_tokens, int):
                return _int_or_none(input_tokens), _int_or_none(output_tokens)
    return None, None


def _field(source: object, key: str) -> object:
    """``source[key]`` for a mapping, ``source.key`` for an object (raw responses are either)."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _int_or_none(value: object) -> int | None:
    # bool is an int; a flag is no token count.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _declares_images(llm: LLM) -> bool:
    declared = getattr(llm.metadata, "is_multi_modal", None)
    return declared if isinstance(declared, bool) else True


def _identity(llm: LLM) -> str:
    name = llm.metadata.model_name
    kind = type(llm).__name__
    return kind if not name or name == _UNKNOWN_MODEL else f"{kind}:{name}"
