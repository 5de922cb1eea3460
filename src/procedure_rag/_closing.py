"""The context-manager half of an object that holds something open."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["Closing"]


class Closing:
    """A context manager whose exit calls :meth:`close` (which subclasses define)."""

    def close(self) -> None:
        """Release what the object holds; closing twice must be harmless."""
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
