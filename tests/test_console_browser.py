"""The console page in a real browser (Debian's chromium, headless, driven by Playwright) over
the real app on the SQLite backend, with ann's and mallory's memory seeded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import browser as helpers
from tests.browser import (
    ANN_DAYS,
    ANN_TOKEN,
    LOCKED,
    MALLORY_TOKEN,
    MARKUP,
    SPACE,
    THREAD,
    ann_note,
    artifacts,
    chromium,
    seed,
    serve,
)

pytestmark = pytest.mark.slow

WEB_SEARCH_REASON = (
    "Context memory is unavailable while web search is enabled, to keep user data out of "
    "external search queries."
)
TABS = {
    "personal": "Ann prefers the quarterly report as a PDF",
    "team": "Acme deploys on Tuesdays after standup",
    "agent": "Ann's services run on Python 3.11",
    "profile": "Your memory profile",
    "settings": LOCKED,
    "jobs": "Nightly consolidation",
}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('console') / 'memory.db'}"
    seed(url)
    with serve(url) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def refused(console_text: str) -> bool:
    """Whether a console message is the browser refusing something under the page's CSP."""
    return "Content Security Policy" in console_text


def new_page(browser: Any) -> Any:
    """A fresh page whose script errors and Content-Security-Policy refusals (console
    messages) are collected in `page.errors`."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: refused(message.text) and errors.append(message.text))
    page.errors = errors
    return page


def open_page(browser: Any, base_url: str, token: str, route: str = "/personal") -> Any:
    """A fresh page signed in with `token` (a sign-in link, confirmed), loaded on `route`."""
    page = new_page(browser)
    page.goto(f"{base_url}/#token={token}")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("nav#tabs a[data-tab]")
    assert "token" not in page.url
    page.goto(f"{base_url}/#{route}")
    page.reload()
    return page


@pytest.fixture
def ann(browser: Any, base_url: str) -> Iterator[Any]:
    page = open_page(browser, base_url, ANN_TOKEN)
    yield page
    assert page.errors == []
    page.context.close()


@pytest.fixture
def mallory(browser: Any, base_url: str) -> Iterator[Any]:
    page = open_page(browser, base_url, MALLORY_TOKEN)
    yield page
    assert page.errors == []
    page.context.close()


def test_each_tab_loads_and_is_saved_as_a_screenshot(ann: Any, tmp_path: Path) -> None:
    folder = artifacts(tmp_path)
    for tab, shown in TABS.items():
        ann.click(f"nav#tabs a[data-tab={tab}]")
        ann.wait_for_selector(f"nav#tabs a[data-tab={tab}][aria-current=page]")
        ann.get_by_text(shown, exact=False).first.wait_for()
        assert ann.locator("nav#tabs a[aria-current=page]").count() == 1
        ann.locator("#main .skeleton").first.wait_for(state="detached")
        path = folder / f"console-{tab}.png"
        ann.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000
        print(f"screenshot: {path}")


def test_the_token_is_kept_for_the_session_and_a_bad_one_asks_again(
    browser: Any, base_url: str
) -> None:
    page = open_page(browser, base_url, ANN_TOKEN)
    page.reload()
    page.get_by_text(TABS["personal"]).wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Access token").fill("not-a-token")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("That token was not accepted").wait_for()
    assert page.get_by_text(TABS["personal"]).count() == 0
    page.get_by_label("Access token").fill(ANN_TOKEN)
    page.get_by_label("Access token").press("Enter")
    page.get_by_text(TABS["personal"]).wait_for()
    assert page.get_by_role("button", name="Sign out").is_visible()
    page.context.close()


def test_the_memory_tabs_pick_a_workspace_and_the_header_names_it(ann: Any) -> None:
    shown = ann.locator("#who .workspace")
    ann.get_by_text(TABS["personal"]).wait_for()
    assert shown.inner_text() == "Workspace: acme"
    picker = ann.get_by_label("Workspace", exact=True)
    assert picker.locator("option:checked").inner_text() == "acme · has memory"
    picker.select_option(label="No workspace")
    ann.wait_for_url("**/#/personal?outside")
    ann.locator("#main .skeleton").first.wait_for(state="detached")
    assert shown.inner_text() == "Workspace: none"
    assert ann.get_by_text(TABS["personal"]).count() == 0
    ann.click("nav#tabs a[data-tab=team]")
    ann.get_by_text(TABS["team"]).wait_for()
    assert shown.inner_text() == "Workspace: acme"
    assert picker.locator("option:checked").inner_text() == "acme · has memory"
    ann.click("nav#tabs a[data-tab=agent]")
    shown.wait_for(state="hidden")


def test_search_finds_the_matching_note_only(ann: Any) -> None:
    ann.get_by_label("Search notes").fill("quarterly report")
    ann.get_by_label("Search notes").press("Enter")
    results = ann.locator(".results")
    results.get_by_text("Ann prefers the quarterly report as a PDF").wait_for()
    assert "ledger export" not in results.inner_text()
    ann.get_by_role("button", name="Clear search").click()
    assert ann.locator(".results").is_hidden()
    assert ann.locator(".days").get_by_text(ann_note(ANN_DAYS[0])).is_visible()


def test_deleting_a_note_asks_first_and_it_stays_gone(ann: Any, tmp_path: Path) -> None:
    text = ann_note(ANN_DAYS[1])
    note = ann.locator("li.note", has_text=text)
    note.get_by_role("button", name="Delete").click()
    dialog = ann.locator("dialog[open]")
    dialog.wait_for()
    ann.screenshot(path=str(artifacts(tmp_path) / "console-delete-dialog.png"))
    assert "Delete this note?" in dialog.inner_text() and text in dialog.inner_text()
    dialog.get_by_role("button", name="Cancel").click()
    ann.locator("dialog").wait_for(state="detached")
    assert note.is_visible()
    note.get_by_role("button", name="Delete").click()
    ann.locator("dialog[open]").get_by_role("button", name="Delete note").click()
    note.wait_for(state="detached")
    ann.get_by_text("Note deleted.").wait_for()
    ann.reload()
    ann.get_by_text(ann_note(ANN_DAYS[0])).wait_for()
    assert ann.locator("li.note", has_text=text).count() == 0


def test_load_older_pages_back_day_by_day(ann: Any) -> None:
    ann.get_by_text(ann_note(ANN_DAYS[0])).wait_for()
    assert ann.get_by_text(ann_note(ANN_DAYS[5])).count() == 0
    older = ann.get_by_role("button", name="Load older")
    older.click()
    ann.get_by_text(ann_note(ANN_DAYS[4])).wait_for()
    while older.is_visible():
        older.click()
        ann.locator("[aria-busy]").first.wait_for(state="detached")
    ann.get_by_text("No older notes.").wait_for()
    days = ann.locator("section.day").evaluate_all("els => els.map(e => e.dataset.day)")
    assert days == sorted(days, reverse=True) and len(days) == len(set(days))
    assert ANN_DAYS[-1].isoformat() in days


def test_editing_the_document_then_restoring_an_older_version(ann: Any) -> None:
    editor = ann.get_by_label("MEMORY.md text")
    editor.wait_for()
    first = "# Ann\n\n- Works on the ledger team"
    assert ann.get_by_role("button", name="Save").is_disabled()
    editor.fill("# Ann\n\n- Works on the ledger team\n- Moved to Lisbon")
    ann.get_by_role("button", name="Save").click()
    ann.get_by_text("Saved version 3.").wait_for()
    assert ann.locator("li.version").first.get_attribute("data-version") == "3"
    ann.reload()
    assert "Moved to Lisbon" in ann.get_by_label("MEMORY.md text").input_value()
    ann.get_by_role("button", name="Restore version 1").click()
    ann.get_by_text("Restored version 1 as version 4.").wait_for()
    assert ann.get_by_label("MEMORY.md text").input_value() == first
    versions = ann.locator("li.version").evaluate_all("els => els.map(e => e.dataset.version)")
    assert versions == ["4", "3", "2", "1"]


def test_a_note_shows_where_it_came_from(ann: Any, tmp_path: Path) -> None:
    note = ann.locator("li.note", has_text="Ann prefers the quarterly report as a PDF")
    facts = note.locator("details.why dl")
    assert facts.is_hidden()
    note.get_by_text("Why?").click()
    shown = facts.inner_text()
    for expected in ("ann-thread-1", "user turn 1", "remember", "call-remember-1", "When"):
        assert expected in shown
    ann.screenshot(path=str(artifacts(tmp_path) / "console-note-provenance.png"))


def test_a_locked_setting_is_refused_with_its_reason(ann: Any, tmp_path: Path) -> None:
    ann.click("nav#tabs a[data-tab=settings]")
    row = ann.locator(f"tr[data-setting={LOCKED}]")
    assert "locked" in row.locator("td.effective").inner_text()
    row.get_by_role("button", name=f"Edit {LOCKED} in the organization layer").click()
    row.get_by_label(f"New value of {LOCKED}").fill("5")
    row.get_by_role("button", name="Save").click()
    refusal = ann.get_by_role("alert").filter(has_text="Not saved")
    refusal.wait_for()
    assert LOCKED in refusal.inner_text()
    assert LOCKED in row.locator(".cell-error").inner_text()
    ann.screenshot(path=str(artifacts(tmp_path) / "console-settings-refused.png"))


def test_web_search_blocks_the_memory_switch_until_the_space_uses_the_default(
    ann: Any, base_url: str, tmp_path: Path
) -> None:
    ann.goto(f"{base_url}/#/settings?space={SPACE}")
    switch = ann.get_by_role("switch", name="Context memory")
    switch.wait_for()
    assert switch.is_disabled()
    assert ann.locator("#switch-help").inner_text() == WEB_SEARCH_REASON
    assert (
        ann.locator("tr[data-setting=web_search] td[data-layer=space]")
        .inner_text()
        .startswith("on")
    )
    ann.screenshot(
        path=str(artifacts(tmp_path) / "console-settings-web-search.png"), full_page=True
    )
    space = ann.locator("th[data-layer=space]")
    space.get_by_role("button", name="Use the platform default").click()
    ann.locator("dialog[open]").get_by_role("button", name="Clear the layer").click()
    ann.get_by_text("The layer now uses the platform default.").wait_for()
    assert not switch.is_disabled()
    assert ann.locator("tr[data-setting=web_search] td.effective").inner_text().startswith("off")


def test_the_keyboard_reaches_tabs_and_dialogs(ann: Any) -> None:
    ann.get_by_text(TABS["personal"]).wait_for()
    ann.keyboard.press("Tab")
    assert ann.evaluate("document.activeElement.className") == "skip"
    ann.locator("nav#tabs a[data-tab=team]").focus()
    ann.keyboard.press("Enter")
    note = ann.locator("li.note", has_text=TABS["team"])
    note.wait_for()
    note.get_by_role("button", name="Delete").focus()
    ann.keyboard.press("Enter")
    ann.locator("dialog[open]").wait_for()
    assert ann.evaluate("document.activeElement.textContent") == "Cancel"
    ann.keyboard.press("Escape")
    ann.locator("dialog").wait_for(state="detached")
    assert note.is_visible()


def test_deleting_the_profile_says_it_is_permanent(ann: Any) -> None:
    ann.click("nav#tabs a[data-tab=profile]")
    ann.get_by_role("button", name="Turn off and delete my memory").click()
    dialog = ann.locator("dialog[open]")
    assert "permanently deletes the memory" in dialog.inner_text()
    dialog.get_by_role("button", name="Disable and delete").click()
    ann.get_by_text("permanently deleted").first.wait_for()
    ann.reload()
    ann.get_by_text("Context memory is off").first.wait_for()
    assert ann.locator(".profile-doc").count() == 0


def test_mallory_sees_only_her_own_memory(mallory: Any, base_url: str, tmp_path: Path) -> None:
    mallory.get_by_text("Mallory's own reminder about the audit").wait_for()
    mallory.screenshot(path=str(artifacts(tmp_path) / "console-mallory-personal.png"))
    for tab in TABS:
        mallory.click(f"nav#tabs a[data-tab={tab}]")
        mallory.locator("#main .skeleton").first.wait_for(state="detached")
        text = mallory.locator("main").inner_text()
        assert "Ann" not in text and "acme" not in text.lower(), tab
    mallory.click("nav#tabs a[data-tab=team]")
    mallory.get_by_text("You are not in any workspace").wait_for()
    answers = []
    for workspace in ("acme", "made-up-workspace"):
        mallory.goto(f"{base_url}/#/team/{workspace}")
        mallory.locator(".not-found").wait_for()
        mallory.screenshot(path=str(artifacts(tmp_path) / f"console-mallory-{workspace}.png"))
        answers.append(mallory.locator("main").inner_text())
        assert "Acme deploys" not in mallory.content()
    assert answers[0] == answers[1]
    assert "does not exist, or it is not yours to see" in answers[0]


def test_run_now_records_a_run_and_summarize_now_answers_for_own_threads_only(
    ann: Any, mallory: Any, base_url: str, tmp_path: Path
) -> None:
    ann.click("nav#tabs a[data-tab=jobs]")
    ann.get_by_role("button", name="MEMORY.md in acme", exact=True).click()
    ann.locator("li.run").first.wait_for()
    run = ann.locator("li.run").first
    assert "run now by ann" in run.inner_text()
    run.locator("summary").click()
    assert "personal" in run.locator("table").inner_text()
    run_id = run.get_attribute("data-run")
    thread = ann.locator(f"li.thread[data-thread='{THREAD}']")
    assert "Send the quarterly report as PDF" in thread.inner_text()
    assert ann.locator("li.thread").count() == 1
    thread.get_by_role("button", name="Summarize now").click()
    answer = ann.locator(".alert").filter(has_text=THREAD)
    answer.wait_for()
    assert "alert error" not in (answer.get_attribute("class") or "")
    ann.screenshot(path=str(artifacts(tmp_path) / "console-jobs-run.png"), full_page=True)
    ann.click("nav#tabs a[data-tab=personal]")
    ann.get_by_text("Why this version?").click()
    source = ann.locator(".why-slot dl").inner_text()
    assert "a background job" in source and "consolidation" in source and run_id in source
    ann.locator(".why-slot dl").get_by_role("link", name=run_id).click()
    ann.locator(f"li.run[data-run='{run_id}']").wait_for()
    mallory.goto(f"{base_url}/#/jobs")
    mallory.get_by_text("No conversations of yours yet").wait_for()
    assert THREAD not in mallory.locator("main").inner_text()
    assert "ann" not in mallory.locator("main").inner_text().lower()


def test_agent_notes_are_added_edited_and_deleted_with_their_sources(ann: Any) -> None:
    ann.click("nav#tabs a[data-tab=agent]")
    target = ann.locator("section.target[data-target=memory]")
    target.get_by_label("Add to The agent's own notes").fill("Deploys need two approvals")
    target.get_by_role("button", name="Add").click()
    entry = target.locator("li.entry", has_text="Deploys need two approvals")
    entry.wait_for()
    entry.get_by_role("button", name="Edit").click()
    target.get_by_label("Entry text").fill("Deploys need three approvals")
    target.get_by_role("button", name="Save").click()
    edited = target.locator("li.entry", has_text="Deploys need three approvals")
    edited.wait_for()
    edited.get_by_text("Why?").click()
    assert "this console or the REST API" in edited.locator("dl").inner_text()
    edited.get_by_role("button", name="Delete").click()
    ann.locator("dialog[open]").get_by_role("button", name="Delete entry").click()
    edited.wait_for(state="detached")
    assert target.locator("li.entry", has_text="Ann's repo uses ruff and mypy").is_visible()
    stored = ann.locator("li.entry[data-key=ann_stack]")
    stored.get_by_text("Why?").click()
    assert "memory_store" in stored.locator("dl").inner_text()
    stored.get_by_role("button", name="Edit").click()
    ann.locator("#edit-ann_stack-content").fill("Ann's services run on Python 3.12")
    ann.get_by_role("button", name="Save").click()
    ann.locator("li.entry[data-key=ann_stack]", has_text="Python 3.12").wait_for()
    ann.reload()
    ann.locator("li.entry[data-key=ann_stack]", has_text="Python 3.12").wait_for()


def test_a_missing_chromium_fails_in_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(helpers.shutil, "which", lambda name: None)
    monkeypatch.setattr(helpers, "DEBIAN_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="chromium is not installed"), chromium():
        pass
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"), chromium():
        pass


def test_memory_text_is_shown_as_text_never_as_markup(ann: Any) -> None:
    note = ann.locator("li.note", has_text="Markup stays text")
    note.wait_for()
    assert note.locator(".note-text").inner_text() == MARKUP
    assert note.locator("img, b").count() == 0
    assert ann.evaluate("window.pwned") is None


def test_a_sign_in_link_asks_whose_it_is_and_signs_in_only_when_confirmed(
    browser: Any, base_url: str, tmp_path: Path
) -> None:
    page = new_page(browser)
    page.goto(f"{base_url}/#token={MALLORY_TOKEN}")
    page.get_by_role("heading", name="Sign in as mallory?").wait_for()
    assert "token" not in page.url
    assert page.evaluate("sessionStorage.length") == 0
    assert page.locator("nav#tabs").is_hidden()
    page.screenshot(path=str(artifacts(tmp_path) / "console-sign-in-link.png"))
    page.reload()
    page.get_by_label("Access token").wait_for()
    assert page.evaluate("sessionStorage.length") == 0
    page.get_by_label("Access token").fill(ANN_TOKEN)
    page.get_by_label("Access token").press("Enter")
    page.get_by_text(TABS["personal"]).wait_for()
    page.goto(f"{base_url}/#token={MALLORY_TOKEN}")
    page.get_by_role("heading", name="Sign in as mallory?").wait_for()
    assert page.get_by_text("replaces the session").is_visible()
    assert page.get_by_text(TABS["personal"]).count() == 0
    page.get_by_role("button", name="Cancel").click()
    page.get_by_text(TABS["personal"]).wait_for()
    assert page.locator("#who .user").inner_text().startswith("ann")
    page.goto(f"{base_url}/#token={MALLORY_TOKEN}")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Mallory's own reminder about the audit").wait_for()
    assert page.locator("#who .user").inner_text().startswith("mallory")
    assert "token" not in page.url
    page.goto(f"{base_url}/#token=not-a-token")
    page.get_by_text("The sign-in link's token was not accepted").wait_for()
    assert page.get_by_text("Mallory's own reminder about the audit").count() == 0
    assert page.errors == []
    page.context.close()


def test_the_page_runs_no_inline_script(ann: Any, base_url: str) -> None:
    answer = ann.request.get(base_url)
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    ann.evaluate(
        "document.body.append(Object.assign(document.createElement('script'),"
        " {textContent: 'window.inlineRan = true'}))"
    )
    assert ann.evaluate("window.inlineRan") is None
    assert any("Content Security Policy" in error for error in ann.errors)
    ann.errors.clear()


def test_agent_memory_off_is_said_before_the_form_is_filled_in(
    mallory: Any, tmp_path: Path
) -> None:
    mallory.click("nav#tabs a[data-tab=agent]")
    notice = mallory.locator("#agent-off")
    notice.wait_for()
    assert "Agent memory is switched off for you (setting agent_memory)" in notice.inner_text()
    assert notice.get_by_role("link", name="Open Settings").get_attribute("href") == "#/settings"
    assert mallory.get_by_role("button", name="Add entry").is_disabled()
    assert mallory.get_by_label("Content").is_disabled()
    mallory.screenshot(path=str(artifacts(tmp_path) / "console-agent-off.png"), full_page=True)


def test_scoped_memory_off_is_said_before_the_document_is_edited(
    mallory: Any, tmp_path: Path
) -> None:
    notice = mallory.locator("#scope-off")
    notice.wait_for()
    assert "Scoped memory is switched off here (setting scoped_memory)" in notice.inner_text()
    mallory.get_by_text("Mallory's own reminder about the audit").wait_for()
    editor = mallory.get_by_label("MEMORY.md text")
    assert editor.get_attribute("readonly") is not None
    assert mallory.get_by_role("button", name="Save").is_disabled()
    assert mallory.get_by_label("Search notes").is_disabled()
    mallory.screenshot(path=str(artifacts(tmp_path) / "console-scoped-off.png"), full_page=True)


def test_the_forms_stay_open_while_their_memory_is_on(ann: Any) -> None:
    ann.click("nav#tabs a[data-tab=agent]")
    ann.locator("li.entry[data-key=ann_stack]").wait_for()
    assert ann.locator("#agent-off").count() == 0
    assert not ann.get_by_role("button", name="Add entry").is_disabled()
    ann.click("nav#tabs a[data-tab=personal]")
    ann.get_by_label("MEMORY.md text").wait_for()
    assert ann.locator("#scope-off").count() == 0
    assert not ann.get_by_label("Search notes").is_disabled()


def test_the_delete_dialog_says_what_remains_and_links_there(ann: Any, tmp_path: Path) -> None:
    ann.click("nav#tabs a[data-tab=jobs]")
    ann.get_by_role("button", name="MEMORY.md in acme", exact=True).click()
    ann.locator("li.run").first.wait_for()
    ann.click("nav#tabs a[data-tab=personal]")
    folded = ann.locator("li.note", has=ann.locator(".badge", has_text="Consolidated")).first
    older = ann.get_by_role("button", name="Load older")
    while folded.count() == 0:
        older.click()
        ann.locator("[aria-busy]").first.wait_for(state="detached")
    text = folded.locator(".note-text").inner_text()
    folded.get_by_role("button", name="Delete").click()
    dialog = ann.locator("dialog[open]")
    remains = {
        item.get_attribute("data-remains"): item.inner_text()
        for item in dialog.locator("li[data-remains]").all()
    }
    ann.screenshot(path=str(artifacts(tmp_path) / "console-delete-remains.png"))
    assert "will no longer see or recall" not in dialog.inner_text()
    assert (
        "MEMORY.md: nightly consolidation already folded this note into it" in remains["document"]
    )
    assert "your profile" in remains["profile"]
    assert "bounded notes and memory entries" in remains["agent"]
    assert "conversation it came from" in remains["threads"]
    links = {link.inner_text(): link.get_attribute("href") for link in dialog.locator("a").all()}
    assert str(links.pop("Forget this fact everywhere")).startswith("#/forget?text=")
    assert links == {
        "Open your profile": "#/profile",
        "Open Agent notes": "#/agent",
        "Open your conversations": "#/jobs",
    }
    dialog.get_by_role("button", name="Edit MEMORY.md").click()
    ann.locator("dialog").wait_for(state="detached")
    assert ann.evaluate("document.activeElement.id") == "doc-text"
    ann.locator("li.note", has_text=text).get_by_role("button", name="Delete").click()
    ann.locator("dialog[open]").get_by_role("link", name="Open your profile").click()
    ann.locator("dialog").wait_for(state="detached")
    ann.wait_for_selector("nav#tabs a[data-tab=profile][aria-current=page]")
    ann.click("nav#tabs a[data-tab=personal]")
    ann.get_by_text(ann_note(ANN_DAYS[0])).wait_for()
    note = ann.locator("li.note", has_text=ann_note(ANN_DAYS[0]))
    note.get_by_role("button", name="Delete").click()
    fresh = ann.locator("dialog[open] li[data-remains=document]").inner_text()
    assert "MEMORY.md, if the fact was also written there" in fresh
    ann.keyboard.press("Escape")
    ann.click("nav#tabs a[data-tab=team]")
    team = ann.locator("li.note", has_text=TABS["team"])
    team.get_by_role("button", name="Delete").click()
    shared = ann.locator("dialog[open]")
    assert "TEAM_MEMORY.md, if the fact was also written there" in shared.inner_text()
    assert "the profile of each member who talked about it" in shared.inner_text()
    assert "The conversations it came from" in shared.inner_text()
    shared.get_by_role("button", name="Cancel").click()
    assert team.is_visible()
