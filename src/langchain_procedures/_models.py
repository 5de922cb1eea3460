"""``LangChainModel``: any LangChain chat model or Runnable as the core's ``TextModel``.

The wrapper translates, nothing more: core :class:`~procedure_rag.Message`s become
``SystemMessage``/``HumanMessage`` (images as LangChain's standard ``image`` content
blocks), and the reply's text and ``usage_metadata`` become a
:class:`~procedure_rag.ModelReply`. Batching, retries, caching and fallback stay
in :class:`~procedure_rag.LLMGenerator`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.content import ContentBlock, ImageContentBlock, TextContentBlock
from langchain_core.runnables import Runnable

from procedure_rag import ImagePart, Message, ModelReply

__all__ = ["LangChainModel"]

_MESSAGE_TYPES: dict[str, Callable[..., BaseMessage]] = {
    "system": SystemMessage,
    "user": HumanMessage,
    "assistant": AIMessage,
}


class LangChainModel:
    """A LangChain chat model (or any Runnable taking a list of messages) as a ``TextModel``.

    Pass it to :class:`~procedure_rag.LLMGenerator`. ``complete`` calls the model's
    ``invoke``, ``acomplete`` its ``ainvoke``. A Runnable may answer with a message or a
    string (a chain ending in ``StrOutputParser``).

    Args:
        model: A ``BaseChatModel``, or any ``Runnable`` whose input is a list of
            LangChain messages.
        identity: The model's stable name in the representation cache key. ``None``
            derives it from a chat model (``"<_llm_type>:<model_name or model>"``, or the
            ``_llm_type`` alone) and uses the class name for other Runnables: pass one
            for a chain, or two chains of the same class share cached replies.
        supports_images: Whether the model reads images; when False the generator
            sends text only.

    Raises:
        ValueError: When ``identity`` is an empty string.

    """

    def __init__(
        self, model: Runnable[Any, Any], *, identity: str | None = None, supports_images: bool = True
    ) -> None:
        if identity == "":
            msg = "identity must be a non-empty string or None"
            raise ValueError(msg)
        self.model = model
        self.identity: str = identity or _identity(model)
        self.supports_images = supports_images

    def __repr__(self) -> str:
        return f"LangChainModel(identity={self.identity!r}, supports_images={self.supports_images})"

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        """Send ``messages`` with ``invoke`` and return the reply's text and token usage."""
        return _reply(self.model.invoke(to_langchain_messages(messages)))

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        """Send ``messages`` with ``ainvoke`` and return the reply's text and token usage."""
        return _reply(await self.model.ainvoke(to_langchain_messages(messages)))


def to_langchain_messages(messages: Sequence[Message]) -> list[BaseMessage]:
    """Translate core messages; a message with images gets text and image content blocks.

    Raises:
        ValueError: For a role other than ``system``, ``user`` or ``assistant``.

    """
    return [_message(m) for m in messages]


def _message(message: Message) -> BaseMessage:
    make = _MESSAGE_TYPES.get(message.role)
    if make is None:
        msg = f"unknown message role {message.role!r}; expected one of {sorted(_MESSAGE_TYPES)}"
        raise ValueError(msg)
    if not message.images:
        # Plain string content: every chat model takes it, multimodal or not.
        return make(content=message.text)
    text: TextContentBlock = {"type": "text", "text": message.text}
    blocks: list[ContentBlock] = [text, *(_image_block(image) for image in message.images)]
    return make(content_blocks=blocks)


def _image_block(image: ImagePart) -> ImageContentBlock:
    if image.data is not None:
        return {
            "type": "image",
            "base64": base64.b64encode(image.data).decode("ascii"),
            "mime_type": image.mime_type,
        }
    if image.url is not None:
        return {"type": "image", "url": image.url, "mime_type": image.mime_type}
    msg = "an ImagePart needs data or a url"
    raise ValueError(msg)


def _reply(result: object) -> ModelReply:
    if isinstance(result, str):
        return ModelReply(text=result)
    if not isinstance(result, BaseMessage):
        msg = f"the model returned {type(result).__name__}; expected a message or a string"
        raise TypeError(msg)
    usage = result.usage_metadata if isinstance(result, AIMessage) else None
    if usage is None:
        return ModelReply(text=result.text)
    return ModelReply(
        text=result.text, input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"]
    )


def _identity(model: Runnable[Any, Any]) -> str:
    if not isinstance(model, BaseChatModel):
        return type(model).__name__
    # ``_llm_type`` is LangChain's own provider tag ("openai-chat", "anthropic-chat"…),
    # the name LangSmith traces use; every chat model defines it.
    llm_type = model._llm_type
    for attribute in ("model_name", "model"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and name:
            return f"{llm_type}:{name}"
    return llm_type
