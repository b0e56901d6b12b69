"""Ids map to store namespace labels injectively, on every backend."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_plugin import Backend, InvalidIdError, MemoryContext, personal_scope, team_scope
from memory_plugin.scope.namespaces import check_id, decode_id, encode_id


def _valid(value: str) -> bool:
    try:
        check_id(value)
    except InvalidIdError:
        return False
    return True


ids = st.text(min_size=1, alphabet=st.characters(codec="utf-8")).filter(_valid)
tricky = st.sampled_from(
    [
        "a.b",
        "a%2Eb",
        "a%2eb",
        "x@example.com",
        "a/b",
        "a b",
        "é",
        "%",
        "..",
        "\U0001d518\U0001d52b",
        "a\u200b",
        "\u200c\u0645",
    ]
)
any_id = st.one_of(ids, tricky)


@given(any_id, any_id)
def test_distinct_ids_never_share_a_label(a: str, b: str) -> None:
    if a != b:
        assert encode_id(a) != encode_id(b)
    else:
        assert encode_id(a) == encode_id(b)


@given(any_id)
def test_labels_are_valid_and_decode_back(value: str) -> None:
    label = encode_id(value)
    assert label and "." not in label
    assert decode_id(label) == value


@given(any_id, any_id)
def test_distinct_users_get_distinct_personal_namespaces(a: str, b: str) -> None:
    ns_a = personal_scope(MemoryContext(user_id=a)).namespace
    ns_b = personal_scope(MemoryContext(user_id=b)).namespace
    assert (ns_a == ns_b) == (a == b)


@given(any_id, any_id)
def test_workspace_and_user_positions_never_collide(a: str, b: str) -> None:
    team = team_scope(MemoryContext(workspace_id=a)).namespace
    personal = personal_scope(MemoryContext(user_id=a, workspace_id=b)).namespace
    assert team != personal
    assert personal[: len(team)] != team


@pytest.mark.parametrize("bad", ["", 3])
def test_empty_or_non_string_id_is_an_error(bad: object) -> None:
    with pytest.raises(InvalidIdError, match="user_id"):
        MemoryContext(user_id=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidIdError, match="must not be empty"):
        encode_id("")


def test_store_keeps_lookalike_ids_apart(backend: Backend) -> None:
    lookalikes = ["a.b", "a%2Eb", "a/b", "a b", "a.b ", "A.B", "ä.b"]
    for user in lookalikes:
        ns = personal_scope(MemoryContext(user_id=user)).namespace
        backend.store.put(ns, "doc", {"owner": user})
    for user in lookalikes:
        ns = personal_scope(MemoryContext(user_id=user)).namespace
        item = backend.store.get(ns, "doc")
        assert item is not None and item.value == {"owner": user}
        assert [i.value["owner"] for i in backend.store.search(ns)] == [user]
