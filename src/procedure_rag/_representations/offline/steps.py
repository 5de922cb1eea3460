"""A text per step of a procedure: small vectors that point at the chunk holding the step.

A chunk's raw vector averages every step it holds; a question about one step matches
that step's own words better. Each step (not a step repeated above a part that opens
inside it) gets the last three headings of its section, so the vector knows the task,
then the step on the next line as parsed (no markup): its condition, its action and its
caution, without the result it also states: "Troubleshooting > Restart HoloLens", "If the
device does not respond, press and hold the Power button for 15 seconds.". These fields are
what a chunk's metadata keeps, so a chunk gives the same texts whether it comes from the
chunker or back from a store. Retrieval counts a step's hit as its chunk's raw text
(:func:`~procedure_rag._retrieval.fusion.fuse`), so the chunk comes back once, with the
step that matched.
"""

from __future__ import annotations

from procedure_rag._language.text import join_lines
from procedure_rag._types import Chunk, ProcedureStep

__all__ = ["SECTION_LEVELS", "step_line", "step_texts"]

#: The section headings (innermost last) a step's text opens with. Measured with steps and
#: sentences on the dev sets (answered@1, HoloLens en / ja / Japanese-native): one heading
#: .76 / .71 / .59, two .79 / .71 / .67, three .79 / .76 / .64, and at the 1,000-token budget
#: HoloLens en answered@5 .95 / .97 / .98. The heading above the last two often names what
#: a sibling section's same steps differ in (the product, the kind of deployment).
SECTION_LEVELS = 3


def step_line(step: ProcedureStep) -> str:
    """The step's condition, action and caution as parsed, in that order; ``""`` without an action.

    The condition says when the step applies and the caution what goes wrong, which is
    what a question about a step often asks ("Should I encrypt the package?"). Measured
    with steps and sentences on the dev sets (answered@1 / answered@5, HoloLens en and ja):
    the action alone .79 / .98 and .76 / .93; condition, action and caution .83 / .98 and
    .76 / .93 (joined by a space even between Japanese characters, Japanese .76 / .97: two
    questions at rank 5, not counted); adding the result moved nothing.
    """
    action = step.action.strip()
    if not action:
        return ""
    return join_lines([part for part in (step.condition.strip(), action, step.caution.strip()) if part])


def step_texts(chunk: Chunk) -> list[str]:
    """One text per step of ``chunk`` that starts in it and has an action, in order.

    A bullet that states a fact rather than an instruction has no action, and no text.
    """
    head = " > ".join(chunk.section_path[-SECTION_LEVELS:])
    lines = (step_line(step) for step in chunk.steps if not step.is_continuation)
    return [f"{head}\n{line}" if head else line for line in lines if line]
