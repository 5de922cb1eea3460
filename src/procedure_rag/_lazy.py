"""Lazy re-exports (PEP 562): a package's public names imported on first use, not at import.

``import langchain_procedures`` then costs what its framework costs, and
``from langchain_procedures import ProcedureTextSplitter`` loads the splitter's modules
only, not the retriever's store, Chroma or model modules. Each package keeps its
imports under ``TYPE_CHECKING`` for type checkers and readers, and a table of where
each name lives for this function (tests/test_package.py holds the two equal).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping


def load_export(package: str, exports: Mapping[str, str], name: str) -> object:
    """``name`` from the module ``exports`` names for it, remembered in ``package``.

    Raises:
        AttributeError: When ``package`` exports no ``name`` (as a missing attribute does).
    """
    module = exports.get(name)
    if module is None:
        msg = f"module {package!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
    return value
