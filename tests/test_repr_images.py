"""Image captions: alt text, figure captions and the sentences that refer to the figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkLevel, ChunkType, chunk
from procedure_rag._representations.offline.images import has_images, image_caption

DATA = Path(__file__).resolve().parent / "data"


def _find(relative: str, heading: str, kind: ChunkType | None = None) -> Chunk:
    chunks = chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative)
    return next(
        c
        for c in chunks
        if c.section_path and c.section_path[-1] == heading and (kind is None or c.chunk_type is kind)
    )


@pytest.mark.parametrize(
    ("relative", "heading", "kind", "phrases"),
    [
        ("hololens/en/hololens-recovery.md", "Reset the device", None, ("HoloLens headset reset",)),
        (
            "hololens/en/hololens-recovery.md",
            "Standard restart procedure",
            ChunkType.PROCEDURE,
            ("HoloLens 2 MicrosoftHoloLensRecovery device manager", "as shown in the following image"),
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "デバイスをリセットする",
            None,
            ("HoloLens ヘッドセットのリセット",),
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "標準の再起動手順",
            ChunkType.PROCEDURE,
            ("デバイス マネージャー", "次の図に示すように"),
        ),
        (
            "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
            "1 利用を開始する",
            None,
            ("図1-1 ナビゲーション画面の表示",),
        ),
        (
            "ja-native/areamanagement-dashboard-tool/_license_evidence/README.md",
            "エリアマネジメント・ダッシュボード",
            ChunkType.PICTURE,
            ("キービジュアル",),
        ),
    ],
)
def test_real_image_caption(
    relative: str, heading: str, kind: ChunkType | None, phrases: tuple[str, ...]
) -> None:
    found = _find(relative, heading, kind)
    assert has_images(found)
    text = image_caption(found)
    for phrase in phrases:
        assert phrase in text


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("![](images/arc_screen.png)", "en", "arc screen"),  # no alt: the file name
        ("Figure 3: The sign-in screen", "en", "Figure 3: The sign-in screen"),
        ("地図画面上の地点を押下する。", "ja", ""),  # 地図 is not a figure
    ],
)
def test_image_rules(text: str, language: str, expected: str) -> None:
    found = Chunk("c", text, ChunkType.TEXT, ChunkLevel.CHILD, (), "s", language)
    caption = image_caption(found)
    assert (expected in caption) if expected else caption == ""
