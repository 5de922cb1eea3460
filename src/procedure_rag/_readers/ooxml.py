"""Office Open XML packages (.xlsx, .docx, .pptx): the checks every Office reader makes first.

An OOXML file is a zip holding ``[Content_Types].xml``, which names the content
type of each part; the main part's type says what the file is (a workbook, a Word
document, a deck). This module tells that from the bytes alone
(:func:`main_content_type`, for format detection) and opens a package for a reader
(:func:`open_package`) after refusing what it must not read: bytes that are not a
zip, a damaged or truncated zip, a package that unpacks to more than the limit (a
zip bomb; the sizes a zip declares bound what :mod:`zipfile` will inflate), and an
OLE compound file, which is either a legacy binary file (.doc, .xls, .ppt) or a
password-protected OOXML file (Office encrypts the whole package into an OLE file
with an ``EncryptedPackage`` stream).

Only XML is parsed here, with the standard library (expat refuses entity
expansion attacks); nothing in a package is ever run.
"""

from __future__ import annotations

import io
import os
import posixpath
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO
from xml.etree import ElementTree as ET

from procedure_rag._errors import ReaderError

__all__ = [
    "DEFAULT_MAX_UNCOMPRESSED_BYTES",
    "DOCUMENT_CONTENT_TYPES",
    "OLE_SIGNATURE",
    "PRESENTATION_CONTENT_TYPES",
    "WORKBOOK_CONTENT_TYPES",
    "Package",
    "main_content_type",
    "ole_problem",
    "ole_suffix",
    "open_package",
    "source_bytes",
]

#: What reading a damaged zip raises: zipfile's own errors, zlib's, truncation, a
#: ValueError for a header offset that points outside the file ("negative seek value"), and
#: a NotImplementedError for a header naming a zip version, compression method or
#: encryption zipfile does not know (a damaged byte reads as "zip file version 24.8"), and a
#: LookupError for an XML declaration naming an encoding there is none of (``encoding="UTx-8"``),
#: and a RuntimeError for an entry flagged as encrypted (zipfile asks for a password).
_DAMAGED = (
    ET.ParseError,
    zipfile.BadZipFile,
    zlib.error,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    LookupError,
    RuntimeError,
)

#: Default most bytes an Office file may unpack to: 256 MiB, many times any real manual,
#: far short of what a zip bomb unpacks to.
DEFAULT_MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
#: The first bytes of an OLE compound file: legacy .doc/.xls/.ppt, or an encrypted OOXML file.
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Main content types of a workbook: .xlsx, .xlsm (macros kept, never run), and their templates.
WORKBOOK_CONTENT_TYPES = (
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
    "application/vnd.ms-excel.template.macroEnabled.main+xml",
)
#: Main content types of a Word document: .docx, .docm (macros kept, never run), and their templates.
DOCUMENT_CONTENT_TYPES = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)
#: Main content types of a PowerPoint deck: .pptx, .pptm (macros kept, never run), slide shows
#: (.ppsx, .ppsm) and templates (.potx, .potm).
PRESENTATION_CONTENT_TYPES = (
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml",
)
_ZIP_SIGNATURE = b"PK\x03\x04"
#: OLE stream names (UTF-16) that tell a legacy Word or PowerPoint file from an Excel one.
_OLE_STREAMS = (
    ("WordDocument".encode("utf-16-le"), "docx"),
    ("PowerPoint Document".encode("utf-16-le"), "pptx"),
)
_CONTENT_TYPES = "[Content_Types].xml"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")  # OLE directory names are UTF-16
_CT_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
#: Most bytes of ``[Content_Types].xml`` read for detection (real ones are a few KB).
_MAX_CONTENT_TYPES_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Package:
    """An opened OOXML package.

    Attributes:
        zip: The zip, checked against the limit.
        main_part: Name of the main part inside the zip (``"xl/workbook.xml"``).
        main_type: Its content type.
        name: The file's name for messages (its path or source id).
    """

    zip: zipfile.ZipFile
    main_part: str
    main_type: str
    name: str

    def read_xml(self, part: str, fmt: str) -> ET.Element:
        """Parse one XML part of the package.

        Raises:
            ReaderError: Naming the file and the part, when it is missing or not XML.
        """
        try:
            with self.zip.open(part) as stream:
                return ET.parse(stream).getroot()  # noqa: S314 - expat refuses entity expansion
        except KeyError:
            problem = "the part is missing"
        except _DAMAGED as exc:
            problem = f"the part is damaged: {exc}"
        raise ReaderError(fmt, part, f"{self.name}: {problem}")

    def iter_elements(self, part: str, fmt: str, tag: str) -> Iterator[ET.Element]:
        """Stream the elements named ``tag`` (namespace ignored) of one XML part.

        Raises:
            ReaderError: As :meth:`read_xml`.
        """
        try:
            with self.zip.open(part) as stream:
                for _, element in ET.iterparse(stream):  # noqa: S314 - expat refuses entity expansion
                    if element.tag.rpartition("}")[2] == tag:
                        yield element
                    element.clear()
        except KeyError:
            raise ReaderError(fmt, part, f"{self.name}: the part is missing") from None
        except _DAMAGED as exc:
            raise ReaderError(fmt, part, f"{self.name}: the part is damaged: {exc}") from exc

    def relationships(self, part: str, fmt: str) -> dict[str, str]:
        """The targets of ``part``'s relationships by id, as part names in the zip."""
        return {rel_id: target for rel_id, _, target in self._relationships(part, fmt)}

    def related(self, part: str, fmt: str, kind: str) -> list[str]:
        """The targets of ``part``'s relationships of one kind, in the order they are listed.

        ``kind`` is the last word of the relationship type: ``"slideLayout"``, ``"notesSlide"``.
        """
        return [target for _, rel_type, target in self._relationships(part, fmt) if rel_type == kind]

    def _relationships(self, part: str, fmt: str) -> list[tuple[str, str, str]]:
        """``(id, kind, target)`` of each internal relationship of ``part`` (see :meth:`related`)."""
        folder, base = posixpath.split(part)
        rels = self.read_xml(posixpath.join(folder, "_rels", base + ".rels"), fmt)
        out = []
        for rel in rels.iter(f"{_REL_NS}Relationship"):
            target = rel.get("Target", "")
            if rel.get("TargetMode") == "External" or not target:
                continue
            resolved = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
            kind = rel.get("Type", "").rpartition("/")[2]
            out.append((rel.get("Id", ""), kind, posixpath.normpath(resolved)))
        return out


def ole_problem(data: bytes, *, suffix: str) -> str:
    """What to tell the user of an OLE compound file handed to the reader of ``suffix`` (``"xlsx"``)."""
    if _ENCRYPTED_STREAM in data:
        return "is password-protected (an encrypted Office file); remove the password in Office and save it"
    return (
        f"is a legacy binary Office file, not .{suffix}; convert it first: "
        f"soffice --headless --convert-to {suffix} FILE"
    )


def ole_suffix(data: bytes) -> str:
    """The OOXML suffix a legacy OLE file converts to: ``"docx"``, ``"pptx"``, else ``"xlsx"``."""
    return next((suffix for stream, suffix in _OLE_STREAMS if stream in data), "xlsx")


def main_content_type(data: bytes) -> str | None:
    """The content type of an OOXML package's main part, told from its bytes; ``None`` when not one."""
    if not data.startswith(_ZIP_SIGNATURE):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo(_CONTENT_TYPES)
            if info.file_size > _MAX_CONTENT_TYPES_BYTES:
                return None
            root = ET.fromstring(zf.read(info))  # noqa: S314 - expat refuses entity expansion
            main = _main_part(zf)
    except (KeyError, *_DAMAGED):
        return None
    return _content_type(root, main) if main else None


def open_package(data: bytes, *, fmt: str, name: str, max_uncompressed_bytes: int | None) -> Package:
    """Open an OOXML package, refusing what must not be read (see the module docstring).

    Args:
        data: The file's bytes.
        fmt: The reader's format name, for messages (``"xlsx"``).
        name: The file's name for messages.
        max_uncompressed_bytes: Most bytes the parts may unpack to; ``None`` means no limit.

    Returns:
        The package, its main part found through the package relationships.

    Raises:
        ReaderError: Record ``"file"`` for bytes that are not a zip, an OLE file
            (legacy or encrypted), a damaged zip or one over the limit; record
            ``"[Content_Types].xml"`` or ``"_rels/.rels"`` when those are missing or bad.
    """
    if data.startswith(OLE_SIGNATURE):
        raise ReaderError(fmt, "file", f"{name} {ole_problem(data, suffix=fmt)}")
    if not data.startswith(_ZIP_SIGNATURE):
        # The bytes are not echoed: a path given by a document's text may name any local file.
        raise ReaderError(
            fmt, "file", f"{name} is not an Office Open XML file: it does not start as a zip does"
        )
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except _DAMAGED as exc:
        raise ReaderError(fmt, "file", f"{name} is a damaged or truncated zip: {exc}") from None
    total = sum(info.file_size for info in infos)
    if max_uncompressed_bytes is not None and total > max_uncompressed_bytes:
        zf.close()
        problem = (
            f"{name} unpacks to {total:,} bytes, over the limit of {max_uncompressed_bytes:,} "
            "(ChunkerOptions.max_uncompressed_bytes: raise it, or set it to None for no limit)"
        )
        raise ReaderError(fmt, "file", problem)
    package = Package(zf, "", "", name)
    main = _main_part(zf)
    if not main:
        raise ReaderError(fmt, "_rels/.rels", f"{name}: no main part (officeDocument relationship)")
    return Package(zf, main, _content_type(package.read_xml(_CONTENT_TYPES, fmt), main), name)


def _main_part(zf: zipfile.ZipFile) -> str:
    """The main part named by the package relationships (``_rels/.rels``), or ``""``."""
    try:
        rels = ET.fromstring(zf.read("_rels/.rels"))  # noqa: S314 - expat refuses entity expansion
    except (KeyError, *_DAMAGED):
        return ""
    for rel in rels.iter(f"{_REL_NS}Relationship"):
        if rel.get("Type") == _OFFICE_DOCUMENT:
            return posixpath.normpath(rel.get("Target", "").lstrip("/"))
    return ""


def _content_type(types: ET.Element, part: str) -> str:
    """The content type ``[Content_Types].xml`` gives ``part``: its override, else its extension's default."""
    for override in types.iter(f"{_CT_NS}Override"):
        if override.get("PartName", "").lstrip("/") == part:
            return override.get("ContentType", "")
    extension = part.rpartition(".")[2].lower()
    for default in types.iter(f"{_CT_NS}Default"):
        if default.get("Extension", "").lower() == extension:
            return default.get("ContentType", "")
    return ""


def source_bytes(
    source: bytes | bytearray | str | os.PathLike[str] | IO[bytes], source_id: str, *, fmt: str, what: str
) -> tuple[bytes, str]:
    """The bytes of an Office file given as bytes, a path or a binary file object, and its name.

    Args:
        source: The file.
        source_id: The name for bytes and file objects (a path names itself).
        fmt: The reader's format, for :class:`~procedure_rag.ReaderError`.
        what: The kind of file, for the type error (``"a Word source"``).

    Raises:
        ReaderError: For a path that cannot be opened.
        TypeError: For anything else.
    """
    if isinstance(source, bytes | bytearray):
        return bytes(source), source_id
    if isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as f:
                return f.read(), os.fspath(source)
        except OSError as exc:
            raise ReaderError(fmt, "file", f"{os.fspath(source)} cannot be opened: {exc}") from exc
    if hasattr(source, "read"):
        return source.read(), source_id
    msg = f"{what} must be bytes, a path or a binary file object, got {type(source).__name__}"
    raise TypeError(msg)
