"""What the core needs of a chat model: the :class:`TextModel` protocol and the values it trades in.

A :class:`TextModel` takes :class:`Message` values (text, with :class:`ImagePart`
images) and answers a :class:`ModelReply`. The LangChain and LlamaIndex adapters
implement it over their chat models; anything else with the same four members works
too. A failure is raised; :func:`retry_after` reads how long a failure asks to wait,
as provider SDKs say it on rate limits.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["ROLES", "ImagePart", "Message", "ModelReply", "TextModel", "retry_after"]

#: Roles a :class:`Message` may have.
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image sent to the model with a message.

    Attributes:
        data: The image bytes, or ``None`` when ``url`` is given.
        url: Where the model can fetch the image (``https:`` or ``data:``), or ``None``.
        mime_type: Media type of the image (``"image/png"``).

    Raises:
        ValueError: When neither ``data`` nor ``url`` is given, or ``mime_type`` is
            not an image type.
    """

    data: bytes | None
    url: str | None
    mime_type: str

    def __post_init__(self) -> None:
        if self.data is None and not self.url:
            msg = "an ImagePart needs data or url"
            raise ValueError(msg)
        if not self.mime_type.startswith("image/"):
            msg = f"mime_type must be an image type such as 'image/png', got {self.mime_type!r}"
            raise ValueError(msg)

    def as_url(self) -> str:
        """The image as a URL: ``url`` when given, else a base64 ``data:`` URL of ``data``."""
        if self.url:
            return self.url
        assert self.data is not None  # noqa: S101 - __post_init__ guarantees one of them
        return f"data:{self.mime_type};base64,{base64.b64encode(self.data).decode('ascii')}"

    def digest(self) -> str:
        """A content hash of the image (of its bytes when given, else of its URL)."""
        payload = self.data if self.data is not None else (self.url or "").encode("utf-8")
        return hashlib.sha256(payload).hexdigest()


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message sent to a :class:`TextModel`.

    Attributes:
        role: ``"system"`` or ``"user"`` (``"assistant"`` for few-shot turns).
        text: The message text.
        images: Images attached to the message, in order.

    Raises:
        ValueError: For an unknown role.
    """

    role: str
    text: str
    images: tuple[ImagePart, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            msg = f"role must be one of {', '.join(ROLES)}, got {self.role!r}"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What a model answered.

    Attributes:
        text: The reply text.
        input_tokens / output_tokens: Token usage, when the model reports it.
    """

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


@runtime_checkable
class TextModel(Protocol):
    """A chat model, as the generator sees it.

    Attributes:
        identity: A stable name of the model and its settings (``"openai:gpt-4o-mini"``);
            part of every cache key, so change it when the model's output would change.
        supports_images: Whether images (:class:`ImagePart`) in a message reach the model.
    """

    @property
    def identity(self) -> str: ...

    @property
    def supports_images(self) -> bool: ...

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        """Answer ``messages``; raise on any failure (it is retried)."""
        ...

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        """Answer ``messages`` without blocking the event loop; raise on any failure."""
        ...


def retry_after(error: BaseException) -> float | None:
    """The seconds a failure asks to wait before the next call, when it says.

    Read from the error's ``retry_after`` attribute (seconds), else from its
    ``response``'s ``retry-after-ms`` or ``retry-after`` header (seconds; the HTTP-date
    form is ignored), as provider SDKs raise them on HTTP 429 and 503. ``None`` when the
    error says nothing usable.
    """
    seconds = _seconds(getattr(error, "retry_after", None))
    if seconds is not None:
        return seconds
    headers = getattr(getattr(error, "response", None), "headers", None)
    get = getattr(headers, "get", None)
    if not callable(get):
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        for spelling in (name, name.title()):
            try:
                seconds = _seconds(get(spelling))
            except Exception:  # a header mapping of an unknown kind: no hint
                return None
            if seconds is not None:
                return seconds * scale
    return None


def _seconds(value: object) -> float | None:
    """A non-negative finite number of seconds from a number or a numeric string, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and 0 <= value < float("inf"):
        return float(value)
    return None
