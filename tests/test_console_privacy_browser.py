"""Your data and Forget everywhere from any item, on the console page in a real browser
(headless chromium, Playwright) over the real app on SQLite: the downloads are the export,
an import into a fresh store shows its report, only a platform admin deletes a user, and a
document line, a profile bullet and an agent's entries open Forget everywhere for their text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests import browser as helpers
from tests.browser import ANN_TOKEN, artifacts, chromium, seed, serve
from tests.test_console_browser import open_page

pytestmark = pytest.mark.slow

ROOT_TOKEN = "root-token"
ROOT = {"identity": "root", "org_id": "o1", "agent_id": "helper", "admin": ["platform"]}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    """The console over ann's seeded memory, with a platform admin's token too, and chromium."""
    monkeypatch.setattr(helpers, "TOKENS", {**helpers.TOKENS, ROOT_TOKEN: ROOT})
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed(url)
    with serve(url) as base, chromium() as browser:
        yield base, browser


def signed_in(browser: Any, base: str, token: str, route: str) -> Any:
    page = open_page(browser, base, token, route)
    page.locator("#main .skeleton").first.wait_for(state="detached")
    return page


def export(page: Any, base: str, query: str) -> bytes:
    """GET /api/export as ann, with the query string given."""
    answer = page.request.get(
        f"{base}/api/export?{query}", headers={"Authorization": f"Bearer {ANN_TOKEN}"}
    )
    assert answer.ok, answer.text()
    return bytes(answer.body())


def test_only_a_platform_admin_sees_and_uses_the_delete_form(
    site: tuple[str, Any], tmp_path: Path
) -> None:
    base, browser = site
    ann = signed_in(browser, base, ANN_TOKEN, "/data")
    ann.get_by_role("button", name="Download JSON").wait_for()
    assert ann.get_by_role("heading", name="Delete a user").count() == 0
    assert ann.locator("#delete-user").count() == 0
    root = signed_in(browser, base, ROOT_TOKEN, "/data")
    card = root.locator("#delete-user-card")
    card.get_by_label("User id").fill("ann")
    card.get_by_label("Their threads too").check()
    card.get_by_role("button", name="Delete user").click()
    dialog = root.locator("dialog[open]")
    assert "Delete user ann?" in dialog.inner_text()
    assert "every thread they own" in dialog.inner_text()
    root.screenshot(path=str(artifacts(tmp_path) / "console-data-delete-user.png"))
    dialog.get_by_role("button", name="Delete user").click()
    done = card.get_by_text("Deleted ann:")
    done.wait_for()
    assert "; 1 threads" in done.inner_text()
    assert json.loads(export(ann, base, "workspace=acme"))["items"] == []
    card.get_by_label("User id").fill("ann")
    card.get_by_role("button", name="Delete user").click()
    root.locator("dialog[open]").get_by_role("button", name="Delete user").click()
    card.get_by_role("alert").filter(has_text="has no memory").wait_for()
    for page in (ann, root):
        assert page.errors == []
        page.context.close()


def test_download_is_the_export_and_importing_it_elsewhere_shows_the_report(
    site: tuple[str, Any], tmp_path: Path
) -> None:
    base, browser = site
    ann = signed_in(browser, base, ANN_TOKEN, "/data")
    day = datetime.now(UTC).date().isoformat()
    with ann.expect_download() as info:
        ann.get_by_role("button", name="Download JSON").click()
    saved = info.value
    assert saved.suggested_filename == f"memory-ann-{day}.json"
    path = tmp_path / saved.suggested_filename
    saved.save_as(path)
    assert path.read_bytes() == export(ann, base, "workspace=acme")
    with ann.expect_download() as info:
        ann.get_by_role("button", name="Download Markdown").click()
    archive = info.value
    assert archive.suggested_filename == f"memory-ann-{day}.md"
    archive.save_as(tmp_path / "archive.md")
    markdown = export(ann, base, "workspace=acme&format=markdown")
    assert (tmp_path / "archive.md").read_bytes() == markdown
    ann.screenshot(path=str(artifacts(tmp_path) / "console-data.png"), full_page=True)
    ann.context.close()

    with serve(f"sqlite:///{tmp_path / 'fresh.db'}") as fresh:
        page = signed_in(browser, fresh, ANN_TOKEN, "/data")
        page.get_by_label("Export file (JSON)").set_input_files(str(path))
        page.get_by_role("button", name="Import").click()
        report = page.locator(".import-report")
        report.get_by_text("Imported", exact=False).wait_for()
        assert "for ann:" in report.inner_text() and "Skipped none." in report.inner_text()
        assert export(page, fresh, "workspace=acme") == path.read_bytes()
        page.get_by_role("button", name="Import").click()
        refused = page.get_by_role("alert").filter(has_text="merge")
        refused.wait_for()
        page.get_by_label("Merge into the memory already here", exact=False).check()
        page.get_by_role("button", name="Import").click()
        page.get_by_text("Imported 0 items for ann").wait_for()
        assert "already there" in page.locator(".import-report").inner_text()
        assert page.errors == []
        page.context.close()


def forget_tab_shows(page: Any, text: str) -> None:
    page.wait_for_selector("nav#tabs a[data-tab=forget][aria-current=page]")
    page.locator("li.place").first.wait_for()
    assert page.locator("#forget-text").input_value() == text


def test_items_other_than_notes_open_forget_everywhere_with_their_text(
    site: tuple[str, Any], tmp_path: Path
) -> None:
    base, browser = site
    ann = signed_in(browser, base, ANN_TOKEN, "/agent")
    bounded = ann.locator("li.entry", has_text="Ann writes in British English")
    bounded.get_by_role("link", name="Forget everywhere").click()
    forget_tab_shows(ann, "Ann writes in British English")

    ann.click("nav#tabs a[data-tab=agent]")
    stored = ann.locator("li.entry[data-key=ann_stack]")
    stored.get_by_role("button", name="Delete").click()
    dialog = ann.locator("dialog[open]")
    assert "may remain elsewhere" in dialog.inner_text()
    ann.screenshot(path=str(artifacts(tmp_path) / "console-entry-delete-remains.png"))
    dialog.get_by_role("link", name="Forget this fact everywhere").click()
    forget_tab_shows(ann, "Ann's services run on Python 3.11")

    ann.click("nav#tabs a[data-tab=personal]")
    editor = ann.get_by_label("MEMORY.md text")
    editor.wait_for()
    start = editor.input_value().index("Likes PDFs") + 3
    editor.evaluate(f"(area) => {{ area.focus(); area.setSelectionRange({start}, {start}); }}")
    ann.get_by_role("button", name="Forget this line everywhere").click()
    forget_tab_shows(ann, "Likes PDFs")

    ann.click("nav#tabs a[data-tab=personal]")
    note = ann.locator("li.note", has_text="Ann prefers the quarterly report as a PDF")
    note.get_by_role("link", name="Forget everywhere").click()
    forget_tab_shows(ann, "Ann prefers the quarterly report as a PDF")

    ann.click("nav#tabs a[data-tab=profile]")
    bullets = ann.locator(".profile-doc li.bullet")
    bullets.first.wait_for()
    text = bullets.first.locator(".bullet-text").inner_text()
    bullets.first.get_by_role("link", name="Forget everywhere").click()
    ann.wait_for_selector("nav#tabs a[data-tab=forget][aria-current=page]")
    assert ann.locator("#forget-text").input_value() == text
    assert ann.errors == []
    ann.context.close()
