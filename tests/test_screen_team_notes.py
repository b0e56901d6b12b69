"""Team notes and chat turns pass the screen; instructions planted for a model do not (issue
38, points 1 and 3). The notes are the team's own: training/screen/written holds 473 notes of
nine departments (43% of them instructions to colleagues: what not to tell a customer yet, who
takes over from now on, an admin or maintenance mode, a counter named after instructions, a
chatbot's template quoted with its role markup) and 86 chat turns that tell someone to
remember something. The rules stage refuses none of them (it refuses only what it can name
with certainty); the whole screen, as shipped, refuses at most 1%, and at least 95% of the
indirect injections, fake headers and hijacks of attacks_indirect.tsv. These figures are
in-sample (the shipped model saw these lines); bench/screen.py reports them held out."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_plugin.safety import rules_violation, violation

WRITTEN = Path(__file__).parent.parent / "training" / "screen" / "written"


def texts(name: str, label: str) -> list[str]:
    found = []
    for line in (WRITTEN / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        kind, _, _, text = line.split("\t")
        if kind == label:
            found.append(text.replace("\\n", "\n"))
    return found


BENIGN = ("benign_department_notes.tsv", "benign_chat_encouraging.tsv")


@pytest.mark.parametrize("name", BENIGN)
def test_the_rules_refuse_no_team_note_or_chat_turn(name: str) -> None:
    notes = texts(name, "benign")
    assert len(notes) >= 80
    assert [n for n in notes if rules_violation(n, visibility="shared")] == []


def test_three_hundred_notes_of_seven_departments_at_least() -> None:
    categories = set()
    for line in (WRITTEN / BENIGN[0]).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            categories.add(line.split("\t")[1])
    assert len(texts(BENIGN[0], "benign")) >= 300
    wanted = {"engineering", "sales", "support", "legal", "hr", "finance", "operations"}
    assert {f"dept_{d}" for d in wanted} <= categories


@pytest.mark.parametrize("visibility", ["shared", "private"])
def test_the_screen_refuses_at_most_one_percent_of_them(visibility: str) -> None:
    notes = [t for name in BENIGN for t in texts(name, "benign")]
    refused = [n for n in notes if violation(n, visibility=visibility)]  # type: ignore[arg-type]
    assert len(refused) <= len(notes) // 100, refused


def test_the_screen_refuses_planted_instructions() -> None:
    attacks = texts("attacks_indirect.tsv", "attack")
    assert len(attacks) >= 300
    passed = [a for a in attacks if violation(a, visibility="shared") is None]
    assert len(passed) <= len(attacks) * 5 // 100, passed[:5]
