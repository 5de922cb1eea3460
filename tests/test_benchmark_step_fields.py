"""The step-field benchmark's judging code: normalising, F1, alignment, the report, the confusion.

These are the numbers the README claims, so each rule is pinned with hand-computed
cases (the gold set's README states the rules); the smoke run at the end chunks every
document of the development set, finds every gold step and checks the issue's targets,
as CI's benchmark run does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import _step_fields_eval as ev
import step_fields as bench


def gold(
    sid: str = "g1", lang: str = "en", line: str = "Select Save.", start: int = 0, **fields: str
) -> ev.GoldStep:
    values = {name: fields.get(name, "") for name in ev.FIELDS}
    return ev.GoldStep(sid, lang, "doc.md", None, line, start, values, fields.get("number_norm", "1"), 0)


def ours(text: str, **fields: str) -> ev.Predicted:
    return ev.Predicted(
        text, {k: v for k, v in fields.items() if k in ev.FIELDS}, fields.get("number_norm", "1")
    )


# ----- normalising and scoring -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Select  **Save**.", "en", "select save"),
        ("[Feedback](hololens-feedback.md)。", "ja", "Feedback"),
        ("![alt text](a.png) shows", "en", "alt text shows"),
        (":menuselection:`Settings --> Reset`", "en", "settings --> reset"),
        ("you&#39;ll see", "en", "you'll see"),
        ("「 設定 」を 選択", "ja", "設定」を選択"),  # whitespace goes, only the ends are stripped
        ("（１）パスワード", "ja", "1)パスワード"),  # NFKC, then the opening bracket is an end
        ("`npm start`\\_x", "en", "npm start_x"),
        ("<b>OK</b>", "en", "ok"),
        ("...", "en", ""),
    ],
)
def test_normalise(text: str, lang: str, expected: str) -> None:
    assert ev.normalise(text, lang) == expected


def test_character_f1_for_japanese_and_word_f1_for_english() -> None:
    # 場合 / 場合は: 2 common characters, precision 1, recall 2/3
    assert ev.f1("場合", "場合は", "ja") == pytest.approx(0.8)
    # 4 words against 2, 2 in common: precision 1/2, recall 1
    assert ev.f1("select the save button", "select save", "en") == pytest.approx(2 / 3)
    # repeated units count as often as they occur in both
    assert ev.f1("a a b", "a b b", "en") == pytest.approx(2 / 3)
    assert ev.f1("x", "y", "en") == 0.0


@pytest.mark.parametrize(
    ("predicted", "gold_value", "lang", "score"),
    [
        ("", "", "en", 1.0),
        ("Save", "", "en", 0.0),
        ("", "Save", "en", 0.0),
        ("**Save**", "Save.", "en", 1.0),
        ("Note: Save", "Save", "en", pytest.approx(2 / 3)),
        ("場合", "場合は", "ja", pytest.approx(0.8)),
    ],
)
def test_score_field(predicted: str, gold_value: str, lang: str, score: float) -> None:
    assert ev.score_field(predicted, gold_value, lang) == score


# ----- alignment ---------------------------------------------------------------------------


def test_a_repeated_line_is_told_apart_by_reading_order() -> None:
    golds = [gold("a", line="Select Save.", start=10), gold("b", line="Select Save.", start=90)]
    preds = [ours("Select Save.", action="first"), ours("Other step."), ours("Select Save.", action="second")]
    aligned = {a.gold.sid: a.predicted for a in ev.align(golds, preds)}
    assert aligned["a"] is preds[0]
    assert aligned["b"] is preds[2]


def test_equal_beats_contained_beats_similar() -> None:
    g = gold(line="Open the Settings app.")
    similar, containing, equal = (
        ours("Open the Setting app"),
        ours("Open the Settings app. Then wait."),
        ours("Open the **Settings** app."),
    )
    assert ev.align([g], [similar, containing, equal])[0].predicted is equal
    assert ev.align([g], [similar, containing])[0].predicted is containing
    assert ev.align([g], [similar])[0].predicted is similar


def test_an_unmatched_gold_step_scores_as_empty() -> None:
    g = gold(
        line="Connect the device to the host PC.",
        action="Connect the device to the host PC.",
        number_norm="2",
    )
    (a,) = ev.align([g], [ours("Something else entirely different", action="x")])
    assert a.predicted is None
    assert a.scores["action"] == 0.0
    assert a.scores["target"] == 1.0  # both empty
    assert a.scores["number_norm"] == 0.0


def test_number_and_depth_are_exact_after_nfkc() -> None:
    g = gold(line="Select Save.", number_norm="（１）")
    (a,) = ev.align([g], [ours("Select Save.", number_norm="(1)")])
    assert (a.scores["number_norm"], a.scores["depth"]) == (1.0, 1.0)


# ----- the report and the confusion -----------------------------------------------------------


def test_report_means_found_and_spurious() -> None:
    golds = [
        gold("1", line="Select Save.", condition="If asked"),
        gold("2", line="Select Open."),
        gold("3", line="Select Close.", condition="When done"),
        gold("4", line="Select Exit."),
    ]
    preds = [
        ours("Select Save.", condition="If asked"),  # exact
        ours("Select Open.", condition="If so"),  # spurious
        ours("Select Close."),  # missed
        ours("Select Exit."),  # both empty
    ]
    table = ev.report(ev.align(golds, preds))
    cell = table["en"]["condition"]
    assert cell["n"] == 4
    assert cell["gold_set"] == 2
    assert cell["exact"] == 0.5  # steps 1 and 4
    assert cell["mean"] == 0.5
    assert cell["mean_gold"] == 0.5  # 1 and 0 over the two set
    assert cell["found"] == 0.5
    assert cell["spurious"] == 0.5
    assert table["all"]["condition"] == cell
    assert table["en"]["matched"]["mean"] == 1.0


def test_confusion_says_where_missed_text_went() -> None:
    golds = [
        gold("1", line="Select Save. Note that it takes long.", condition="", caution="it takes long"),
        gold("2", line="If asked, select Save.", condition="If asked", target="Save"),
        gold("3", line="Select Save.", result="The file is saved"),
    ]
    preds = [
        ours("Select Save. Note that it takes long.", condition="it takes long"),  # caution → condition
        ours("If asked, select Save.", target="If asked"),  # condition left empty, target other text
        ours("Select Save."),  # result left empty
    ]
    matrix = ev.confusion(ev.align(golds, preds))
    assert matrix["en"]["caution"] == {"condition": 1}
    assert matrix["en"]["condition"] == {"empty": 1}
    assert matrix["en"]["target"] == {"other text": 1}
    assert matrix["en"]["result"] == {"empty": 1}
    assert "action" not in matrix["en"]


def test_unmet_targets_name_the_field_and_language() -> None:
    table = {
        "ja": {
            **{name: {"found": 1.0, "mean": 1.0} for name in ("action", "target", "condition", "caution")},
            "number_norm": {"exact": 0.97},
        }
    }
    table["ja"]["target"] = {"found": 0.5, "mean": 0.9}
    assert bench.unmet_targets(table) == ["ja target found 0.50 < 0.90", "ja number_norm exact 0.97 < 0.98"]


def test_load_gold_names_a_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"sid": "a"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"g\.jsonl:1: not a gold step record"):
        ev.load_gold(path)


# ----- the smoke run on the development set ------------------------------------------------------


def test_dev_set_run_finds_every_step_and_meets_the_targets(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "step_fields.json"
    gold_path = shared_data / "step-fields" / "dev.jsonl"
    code = bench.main(
        ["--gold", str(gold_path), "--docs-root", str(shared_data), "--out", str(out), "--check-targets"]
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["unmet_targets"] == []
    assert code == 0
    scores = result["scores"]
    assert set(scores) == {"en", "ja", "all"}
    for lang in ("en", "ja"):
        assert scores[lang]["matched"]["mean"] == 1.0  # every gold step found among the product's steps
        assert set(scores[lang]) == {*ev.SCORED, "matched"}
    assert scores["all"]["action"]["n"] == len(ev.load_gold(gold_path))
    assert "| target | ja |" in out.with_suffix(".md").read_text(encoding="utf-8")
