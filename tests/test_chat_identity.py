"""A chat thread belongs to exactly one person (issue 34, point 1): `ann` of org o2 opening a
chat thread of the same name and workspace as `ann` of org o1 gets a thread of her own, on
every backend; o1's ann resumes hers."""

from __future__ import annotations

import io

import pytest

from memory_plugin import Backend, MemoryContext, OfflineModel
from memory_plugin.offline.chat import Chat, thread_id

pytestmark = pytest.mark.slow

SECRET = "Biscuit4417"


def history(backend: Backend, ctx: MemoryContext, thread: str) -> str:
    """What reopening `thread` as `ctx` replays."""
    out = io.StringIO()
    Chat(backend, OfflineModel(), ctx, thread_id(ctx, thread), out).show_history()
    return out.getvalue()


@pytest.mark.parametrize("shared", [False, True])
def test_another_orgs_ann_never_opens_anns_chat_thread(backend: Backend, shared: bool) -> None:
    visibility = "shared" if shared else "private"
    o1, o2 = (
        MemoryContext(user_id="ann", org_id=org, workspace_id="acme", thread_visibility=visibility)
        for org in ("o1", "o2")
    )
    Chat(backend, OfflineModel(), o1, thread_id(o1, "main"), io.StringIO()).send(
        f"My cat is called {SECRET}."
    )
    assert SECRET in history(backend, o1, "main")
    assert SECRET not in history(backend, o2, "main")
    assert thread_id(o1, "main") != thread_id(o2, "main")
