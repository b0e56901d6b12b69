"""The console asks before it forgets (issue 34, point 10), in a real browser over the real app
on SQLite: "Forget selected" opens a dialog listing the ticked places (what goes) and the
others (what stays, with why); Cancel changes nothing, confirming forgets exactly the ticked
places. The result rows and the dialog are saved as screenshots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_plugin import connect
from memory_plugin.agent import AgentMemory
from memory_plugin.scoped import ScopedMemory
from tests.browser import ANN, ANN_TOKEN, artifacts, chromium, seed, serve
from tests.test_console_browser import open_page

pytestmark = pytest.mark.slow

SHARED = "The ledger style guide lives in the wiki"
LEDGER_PLACES = 13


@pytest.fixture
def database(tmp_path: Path) -> str:
    """The browser tests' seed, and an agent entry shared with every user that names the
    ledger (ann sees it but may not change it)."""
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed(url)
    with connect(url) as backend:
        AgentMemory(backend.store).store_entry(ANN, "style", SHARED, visibility="shared")
    return url


@pytest.fixture
def ann(database: str) -> Iterator[Any]:
    with serve(database) as base, chromium() as browser:
        page = open_page(browser, base, ANN_TOKEN, "/forget")
        yield page
        assert page.errors == []
        page.context.close()


def find(page: Any, text: str) -> Any:
    """Search Forget everywhere for `text`: the result rows."""
    page.wait_for_selector("nav#tabs a[data-tab=forget][aria-current=page]")
    page.fill("#forget-text", text)
    page.get_by_role("button", name="Find").click()
    places = page.locator("li.place")
    places.first.wait_for()
    return places


def ledger_in_memory(database: str) -> int:
    """How many of ann's personal notes name the ledger."""
    with connect(database) as backend:
        notes = ScopedMemory(backend.store).list_notes(ANN)
    return sum("ledger" in note.body for note in notes)


def labels(dialog: Any, which: str) -> list[str]:
    return [
        str(item.get_attribute("data-place"))
        for item in dialog.locator(f"ul[data-list={which}] > li[data-place]").all()
    ]


def test_forget_selected_asks_with_what_goes_and_what_stays(
    ann: Any, database: str, tmp_path: Path
) -> None:
    places = find(ann, "ledger")
    assert places.count() == LEDGER_PLACES
    shared = ann.locator("li.place", has_text=SHARED)
    assert shared.locator("input[type=checkbox]").is_disabled()
    history = ann.locator("li.place[data-kind=history]")
    history.locator("input[type=checkbox]").uncheck()
    ann.screenshot(path=str(artifacts(tmp_path) / "console-forget-rows.png"), full_page=True)
    row = places.first
    box, label = row.locator("input[type=checkbox]"), row.locator(".place-head label")
    box_at, label_at, row_at = box.bounding_box(), label.bounding_box(), row.bounding_box()
    assert box_at["width"] <= 24 and box_at["height"] <= 24, box_at
    assert box_at["x"] - row_at["x"] <= 24, (box_at, row_at)
    assert 0 < label_at["x"] - (box_at["x"] + box_at["width"]) <= 16, (box_at, label_at)

    ids = [str(place.get_attribute("data-place")) for place in places.all()]
    boxes = [place.locator("input[type=checkbox]").is_checked() for place in places.all()]
    ticked = [place for place, box in zip(ids, boxes, strict=True) if box]
    stays = [place for place, box in zip(ids, boxes, strict=True) if not box]
    assert len(ticked) == LEDGER_PLACES - 2 and len(stays) == 2
    notes_before = ledger_in_memory(database)
    assert notes_before > 0

    ann.get_by_role("button", name="Forget selected").click()
    dialog = ann.locator("dialog[open]")
    dialog.wait_for()
    ann.screenshot(path=str(artifacts(tmp_path) / "console-forget-confirm.png"))
    assert f"Forget “ledger” in {len(ticked)} places?" in dialog.inner_text()
    assert labels(dialog, "goes") == ticked
    assert labels(dialog, "stays") == stays
    stay_text = dialog.locator("ul[data-list=stays]").inner_text()
    assert "you unticked it" in stay_text and "Not yours to change" in stay_text
    dialog.get_by_role("button", name="Cancel").click()
    ann.locator("dialog").wait_for(state="detached")
    assert ledger_in_memory(database) == notes_before
    assert find(ann, "ledger").count() == LEDGER_PLACES

    ann.locator("li.place[data-kind=history] input[type=checkbox]").uncheck()
    ann.get_by_role("button", name="Forget selected").click()
    dialog.wait_for()
    dialog.get_by_role("button", name=f"Forget in {len(ticked)} places").click()
    ann.get_by_text(f"Forgot {len(ticked)} place(s).").wait_for()
    assert ledger_in_memory(database) == 0
    left = find(ann, "ledger")
    kinds = sorted(place.get_attribute("data-kind") for place in left.all())
    assert kinds == ["agent_memory", "history"]
