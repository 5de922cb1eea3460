"""A text per step of a procedure: small vectors that point at the chunk holding the step.

A chunk's raw vector averages every step it holds; a question about one step matches
that step's own words better. Each step (not a step repeated above a part that opens
inside it) gets the last three headings of its section, so the vector knows the task,
then the step's action on the next line (its instruction as parsed: no markup, without
the result or condition the step also states): "Troubleshooting > Restart HoloLens",
"Press and hold the Power button for 15 seconds.". The action is what a chunk's
metadata keeps, so a chunk gives the same texts whether it comes from the chunker or
back from a store. Retrieval counts a step's hit as its chunk's raw text
(:func:`~procedure_rag._retrieval.fusion.fuse`), so the chunk comes back once, with the
step that matched.
"""

from __future__ import annotations

from procedure_rag._types import Chunk

__all__ = ["SECTION_LEVELS", "step_texts"]

#: The section headings (innermost last) a step's text opens with. Measured with steps and
#: sentences on the dev sets (answered@1, HoloLens en / ja / Japanese-native): one heading
#: .76 / .71 / .59, two .79 / .71 / .67, three .79 / .76 / .64, and at the 1,000-token budget
#: HoloLens en answered@5 .95 / .97 / .98. The heading above the last two often names what
#: a sibling section's same steps differ in (the product, the kind of deployment).
SECTION_LEVELS = 3


def step_texts(chunk: Chunk) -> list[str]:
    """One text per step of ``chunk`` that starts in it and has an action, in order.

    A bullet that states a fact rather than an instruction has no action, and no text.
    """
    head = " > ".join(chunk.section_path[-SECTION_LEVELS:])
    lines = (step.action.strip() for step in chunk.steps if not step.is_continuation)
    return [f"{head}\n{line}" if head else line for line in lines if line]
