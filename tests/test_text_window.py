"""The text window a streaming reader writes into and the chunker slices and releases."""

from __future__ import annotations

import pytest

from procedure_rag._readers.text_window import TextWindow


def written(*parts: str) -> TextWindow:
    window = TextWindow()
    for part in parts:
        window.append(part)
    return window


def test_slices_are_by_offsets_of_the_whole_text() -> None:
    window = written("Open the ", "box.\n\n", "Lift the lid.")
    whole = "Open the box.\n\nLift the lid."
    assert len(window) == len(whole)
    assert window[0:4] == whole[0:4]
    assert window[9:13] == "box."
    assert window[15:] == whole[15:]
    assert window[20:99] == whole[20:99]  # past the end, as a str slice
    assert window.text() == whole


def test_released_text_is_gone_but_offsets_stay() -> None:
    window = written("0123456789", "abcdef")
    window.release(8)
    assert window.released == 8
    assert len(window) == 16  # the whole text's length: offsets do not move
    assert window[8:12] == "89ab"
    window.append("XYZ")
    assert window[14:19] == "efXYZ"
    assert window.text() == "89abcdefXYZ"
    with pytest.raises(IndexError, match=r"offset 7 of the text was released \(the window starts at 8\)"):
        window[7:9]


def test_release_goes_no_further_than_the_text_and_never_back() -> None:
    window = written("abc")
    window.release(10)  # not written yet: nothing past the end is released
    assert window.released == 3
    window.append("def")
    assert window[3:6] == "def"
    window.release(1)  # before what is already released: nothing happens
    assert window.released == 3
    assert window[5:5] == ""


def test_slices_with_a_step_or_negative_offsets_are_refused() -> None:
    window = written("abcdef")
    with pytest.raises(IndexError, match="no step"):
        window[0:4:2]
    with pytest.raises(IndexError, match="no step"):
        window[-2:]
