"""Records kept on disk, not in memory, while a long PDF is laid out in passes.

The layout of a PDF is decided over the whole document (running lines, the body font,
headings, contents lists, the text's right edge), but holding every page's lines until
the last page is read makes memory grow with the page count. The reader instead writes
each page (its lines, later its blocks) to a :class:`Spool` and reads it back in every
pass, so it holds one page at a time and the summaries the passes count.

A spool is an unnamed temporary file (:func:`tempfile.TemporaryFile`): on POSIX it is
removed from the directory as soon as it is made, so nothing is left behind even when
reading stops on an error or the process is killed; closing it frees the disk space.

Records are written as JSON, not pickled: nothing under ``src/`` unpickles (a file on
disk is never trusted to build objects), so only the dataclasses a spool is given can
come back, field by field. An object a record holds twice (a line in its page's lines
and in a block's) is written once and comes back as one object, since the layout
compares lines by identity.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["Spool"]

T = TypeVar("T")


class Spool(Generic[T]):
    """Records appended to a temporary file and read back by index, one at a time.

    Each record is written on its own; only the offsets, eight bytes a record, stay in
    memory. ``types`` are the dataclasses records may hold (nested in lists, tuples and
    each other); any other object is refused when written.
    """

    def __init__(self, types: Iterable[type]) -> None:
        self._types = {t: (t.__qualname__, tuple(f.name for f in dataclasses.fields(t))) for t in types}
        self._by_name = {name: t for t, (name, _) in self._types.items()}
        # Closed by close(), which the reader calls in a finally.
        self._file = tempfile.TemporaryFile(prefix="procedure-rag-pdf-")  # noqa: SIM115
        self._offsets = array("q")
        self._end = 0

    def append(self, record: T) -> None:
        """Write ``record`` after the last one."""
        data = json.dumps(_Encoder(self._types).encode(record), separators=(",", ":")).encode("utf-8")
        self._file.seek(self._end)
        self._offsets.append(self._end)
        self._file.write(data)
        self._end += len(data)

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, index: int) -> T:
        start = self._offsets[index]
        end = self._offsets[index + 1] if index + 1 < len(self._offsets) else self._end
        self._file.seek(start)
        record: T = _Decoder(self._by_name).decode(json.loads(self._file.read(end - start)))
        return record

    def __iter__(self) -> Iterator[T]:
        for index in range(len(self._offsets)):
            yield self[index]

    def close(self) -> None:
        """Delete the file (idempotent)."""
        self._file.close()

    def __enter__(self) -> Spool[T]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# The JSON forms: a list is a list; a tuple {"t": [...]}; a dataclass {"d": name, "f": [fields]}
# the first time, {"r": n} (the n-th dataclass object written) after that.
_SCALARS = (str, int, float, bool, type(None))


class _Encoder:
    def __init__(self, types: dict[type, tuple[str, tuple[str, ...]]]) -> None:
        self.types = types
        # id -> number: the record holds every object it names until it is written, so no id is reused.
        self.seen: dict[int, int] = {}

    def encode(self, obj: object) -> Any:  # noqa: ANN401 - a JSON value
        if isinstance(obj, _SCALARS):
            return obj
        if isinstance(obj, list):
            return [self.encode(x) for x in obj]
        if isinstance(obj, tuple):
            return {"t": [self.encode(x) for x in obj]}
        known = self.types.get(type(obj))
        if known is None:
            name = type(obj).__qualname__
            msg = f"a spool record cannot hold {name} objects (not among the types it was given)"
            raise TypeError(msg)
        number = self.seen.get(id(obj))
        if number is not None:
            return {"r": number}
        self.seen[id(obj)] = len(self.seen)
        name, fields = known
        return {"d": name, "f": [self.encode(getattr(obj, f)) for f in fields]}


class _Decoder:
    def __init__(self, types: dict[str, type]) -> None:
        self.types = types
        self.made: list[object] = []

    def decode(self, value: Any) -> Any:  # noqa: ANN401 - a JSON value, then what it stands for
        if isinstance(value, list):
            return [self.decode(x) for x in value]
        if not isinstance(value, dict):
            return value
        if "t" in value:
            return tuple(self.decode(x) for x in value["t"])
        if "r" in value:
            return self.made[value["r"]]
        # Numbered in the order the encoder met them: before their fields.
        number = len(self.made)
        self.made.append(None)
        obj = self.types[value["d"]](*[self.decode(x) for x in value["f"]])
        self.made[number] = obj
        return obj
