"""Forget everywhere on the console page in a real browser (headless chromium, Playwright)
over the real app on SQLite: the search box lists every place with where it came from, the
places found by words are ticked, "Forget selected" removes them once its dialog is confirmed,
and a note's delete dialog opens it for the note's text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import ANN_TOKEN, MARKUP, chromium, seed, serve
from tests.test_console_browser import open_page

pytestmark = pytest.mark.slow


@pytest.fixture
def ann(tmp_path: Any) -> Iterator[Any]:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed(url)
    with serve(url) as base, chromium() as browser:
        page = open_page(browser, base, ANN_TOKEN)
        yield page
        assert page.errors == []
        page.context.close()


def test_forget_everywhere_finds_lists_and_forgets(ann: Any) -> None:
    ann.click("nav#tabs a[data-tab=forget]")
    ann.wait_for_selector("nav#tabs a[data-tab=forget][aria-current=page]")
    ann.fill("#forget-text", "ledger")
    ann.get_by_role("button", name="Find").click()
    places = ann.locator("li.place")
    places.first.wait_for()
    assert places.count() == 12
    assert ann.get_by_text('"ledger" is in 12 places.').is_visible()
    history = ann.locator("li.place[data-kind=history]")
    assert "earlier versions of the document" in history.inner_text()
    line = ann.locator("li.place[data-kind=document]")
    assert "personal memory of workspace acme: document line" in line.inner_text()
    assert line.locator("input[type=checkbox]").is_checked()
    line.get_by_text("Why?").click()
    assert "this console or the REST API" in line.inner_text()
    ann.get_by_role("button", name="Forget selected").click()
    ann.locator("dialog[open]").get_by_role("button", name="Forget in 12 places").click()
    ann.get_by_text("Forgot 12 place(s).").wait_for()
    ann.click("nav#tabs a[data-tab=personal]")
    ann.get_by_text("Works on", exact=False).first.wait_for(state="detached")
    ann.locator("li.note").first.wait_for()
    assert ann.get_by_text("the ledger export runs").count() == 0


def test_the_delete_dialog_opens_forget_everywhere_for_the_note(ann: Any) -> None:
    note = ann.locator("li.note", has_text="Markup stays text")
    note.get_by_role("button", name="Delete").click()
    ann.locator("dialog[open]").get_by_role("link", name="Forget this fact everywhere").click()
    ann.wait_for_selector("nav#tabs a[data-tab=forget][aria-current=page]")
    ann.locator("li.place").first.wait_for()
    assert ann.locator("#forget-text").input_value() == MARKUP
    (shown,) = ann.locator("li.place .place-text").all_inner_texts()
    assert shown == MARKUP
    assert ann.evaluate("window.pwned") is None
