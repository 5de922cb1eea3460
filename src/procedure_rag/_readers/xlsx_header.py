"""Procedure sheets: the header row found by its role words, Japanese and English side by side.

A procedure sheet (作業手順書, テスト仕様書, a runbook's step table) has a header of one
or two rows (a group label over its columns, cells merged across or down) naming
each column's role: the step number, the action, the expected result, a caution or
note, a condition. :func:`find_header` finds the first such header among a sheet's
first rows and gives each column its role and label. Header cells are matched
whole (after NFKC, case folding and dropping spaces), never as substrings: 作業者,
作業日 and 作業結果 are no action or result columns.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ROLE_WORDS", "Header", "find_header", "normalise_label"]

#: Header words by the role of their column; a cell names a role when it is one of them whole.
ROLE_WORDS: Mapping[str, tuple[str, ...]] = {
    "number": ("No", "No.", "番号", "項番", "手順番号", "#", "Step No.", "Step #"),
    "action": (
        "手順",
        "作業",
        "作業内容",
        "作業手順",
        "操作",
        "操作手順",
        "操作内容",
        "手順内容",
        "Action",
        "Actions",
        "Procedure",
        "Instruction",
        "Instructions",
        "Task",
        "Operation",
    ),
    "result": (
        "確認",
        "確認事項",
        "確認内容",
        "期待結果",
        "期待値",
        "結果",
        "確認結果",
        "Expected result",
        "Expected results",
        "Expected",
        "Result",
        "Results",
        "Verification",
    ),
    "caution": ("備考", "注意", "注意事項", "Notes", "Note", "Caution", "Cautions", "Remarks", "Warning"),
    "condition": (
        "条件",
        "前提条件",
        "事前条件",
        "Condition",
        "Conditions",
        "Prerequisite",
        "Prerequisites",
        "Precondition",
        "Preconditions",
    ),
    # "Step" numbers the rows when another column holds the action, else it is the action.
    "step": ("Step", "Steps"),
}
#: Roles whose cells make a row a step (the number alone does not: empty template rows).
FIELD_ROLES = ("action", "result", "caution", "condition")
#: Rows from the top searched for a header.
_HEADER_SEARCH_ROWS = 30


def normalise_label(text: str) -> str:
    """A header cell as compared with the role words: NFKC, case folded, no spaces, no trailing ``:``."""
    folded = "".join(unicodedata.normalize("NFKC", text).casefold().split())
    return folded.rstrip(":") or folded


_ROLE_BY_WORD = {normalise_label(word): role for role, words in ROLE_WORDS.items() for word in words}


@dataclass(frozen=True, slots=True)
class Header:
    """A procedure sheet's header.

    Attributes:
        first_row: Index of its first row in the sheet's rows (0-based).
        rows: How many rows it takes (1 or 2).
        labels: Each column's label (the lower header cell, else the upper one); ``""`` past the table.
        roles: Each column's role (``"number"``, ``"action"``, ``"result"``, ``"caution"``,
            ``"condition"``) or ``""``.
        width: Columns of the table: from the first to the last labelled column
            without an unlabelled column between (a sheet's side table is left out).
    """

    first_row: int
    rows: int
    labels: tuple[str, ...]
    roles: tuple[str, ...]
    width: int

    @property
    def end(self) -> int:
        """Index of the first row after the header."""
        return self.first_row + self.rows


def _role(text: str) -> str:
    return _ROLE_BY_WORD.get(normalise_label(text), "") if text else ""


def _roles_of(row: Sequence[str]) -> set[str]:
    return {role for cell in row if (role := _role(cell))}


def _is_header(row: Sequence[str]) -> bool:
    roles = _roles_of(row)
    return len(roles) >= 2 and bool(roles & {"action", "step"})


def _names_roles(upper: Sequence[str], lower: Sequence[str]) -> bool:
    """Whether ``lower`` is a second header row: it names a field's role and has no number under the No."""
    numbers = [col for col, cell in enumerate(upper) if _role(cell) == "number"]
    if any(col < len(lower) and lower[col] for col in numbers):
        return False  # a numbered row: the first step, whatever its cells say
    return bool(_roles_of(lower) - {"number"})


def find_header(rows: Sequence[Sequence[str]], merged_down: set[tuple[int, int]]) -> Header | None:
    """The procedure header among the first rows of a sheet, or ``None`` for a sheet of another kind.

    Args:
        rows: The sheet's cell texts, row by row, merged ranges filled with their
            top-left cell's text.
        merged_down: ``(row, column)`` of cells filled from the cell above them
            (a range merged down), 0-based.

    Returns:
        The first row naming at least two roles, one of them the action (or a
        ``Step`` column), with the row under it as a second header row when a range
        merges down into it or it names a role and holds no step number; else with
        the row above it when a range merges down from there.
    """
    for index, row in enumerate(rows[:_HEADER_SEARCH_ROWS]):
        if not _is_header(row):
            continue
        below = rows[index + 1] if index + 1 < len(rows) else ()
        if below and (
            any((index + 1, col) in merged_down for col in range(len(below))) or _names_roles(row, below)
        ):
            return _header(rows[index], below, index, 2, {c for r, c in merged_down if r == index + 1})
        if index and any((index, col) in merged_down for col in range(len(row))):
            return _header(rows[index - 1], row, index - 1, 2, {c for r, c in merged_down if r == index})
        return _header(row, (), index, 1, set())
    return None


def _header(upper: Sequence[str], lower: Sequence[str], first: int, count: int, copied: set[int]) -> Header:
    width = max(len(upper), len(lower))
    labels: list[str] = []
    roles: list[str] = []
    for col in range(width):
        top = upper[col] if col < len(upper) else ""
        bottom = lower[col] if col < len(lower) and col not in copied else ""
        # The lower cell is the specific one: its role, or none when it names none (概要 under 作業手順).
        labels.append(bottom or top)
        roles.append(_role(bottom) if bottom else _role(top))
    start = next((c for c, label in enumerate(labels) if label), 0)
    table_end = next((c for c in range(start, width) if not labels[c]), width)
    roles = [role if col < table_end else "" for col, role in enumerate(roles)]
    if "step" in roles:
        step_role = "number" if "action" in roles else "action"
        roles = [step_role if role == "step" else role for role in roles]
    return Header(first, count, tuple(labels), tuple(roles), table_end)
