"""Layered settings: platform -> org -> space -> user, locks, clamping, env switches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_plugin import (
    Backend,
    LayeredSettings,
    LockedSettingError,
    MemoryContext,
    MemorySettings,
    SettingsError,
)
from memory_plugin.settings import field_bounds
from memory_plugin.settings.env import env_var
from memory_plugin.settings.layers import LAYER_KEY, layer_namespace

CTX = MemoryContext(user_id="ann", org_id="acme", space_id="research", workspace_id="w1")


def _settings(backend: Backend, **env: str) -> LayeredSettings:
    return LayeredSettings(backend.store, environ=env)


def test_reference_defaults() -> None:
    s = MemorySettings()
    assert (s.document_soft_limit_chars, s.document_hard_limit_chars) == (18_000, 25_000)
    assert (s.note_max_chars, s.recall_default_k, s.recall_max_k) == (2_000, 8, 20)
    assert (s.recent_notes_max_chars, s.consolidation_min_age_days) == (4_000, 7)
    assert (s.consolidation_max_scopes, s.consolidation_max_notes) == (50, 200)
    assert s.consolidation_max_chars == 20_000
    assert (s.flush, s.flush_max_chars, s.flush_timeout_seconds) == (True, 500, 5.0)
    assert (s.masking_trigger_ratio, s.masking_keep_recent) == (0.55, 5)
    assert (s.summarization_trigger_ratio, s.summarization_keep_ratio) == (0.80, 0.10)
    assert (s.fallback_context_window, s.compaction_manual) == (200_000, False)
    assert (s.recent_window_messages, s.rolling_summary_messages) == (20, 10)
    assert s.rolling_summary_tokens == 8_000
    assert (s.summary_timeout_seconds, s.profile_timeout_seconds) == (30.0, 30.0)
    assert (s.compression_timeout_seconds, s.consolidation_timeout_seconds) == (60.0, 120.0)
    assert s.store_timeout_seconds == 5.0
    assert (s.profile_max_tokens, field_bounds("profile_max_tokens")) == (2_000, (500, 8_000))


def test_every_numeric_setting_has_bounds_containing_its_default() -> None:
    for name, info in MemorySettings.model_fields.items():
        default = info.default
        if isinstance(default, int | float) and not isinstance(default, bool):
            low, high = field_bounds(name)
            assert low is not None and high is not None, name
            assert low <= default <= high, name


def test_direct_construction_outside_bounds_is_an_error() -> None:
    with pytest.raises(SettingsError, match="note_max_chars"):
        MemorySettings(note_max_chars=10)
    with pytest.raises(SettingsError, match="nonsense"):
        MemorySettings(nonsense=1)  # type: ignore[call-arg]


def test_each_layer_replaces_only_what_it_sets(backend: Backend) -> None:
    settings = _settings(backend)
    settings.update("platform", CTX, set={"recall_default_k": 6, "note_max_chars": 1_500})
    settings.update("org", CTX, set={"recall_default_k": 5})
    settings.update("space", CTX, set={"recent_notes_max_chars": 3_000})
    settings.update("user", CTX, set={"recall_default_k": 4})
    eff = settings.get(CTX)
    assert eff.values.recall_default_k == 4 and eff.sources["recall_default_k"] == "user"
    assert eff.values.note_max_chars == 1_500 and eff.sources["note_max_chars"] == "platform"
    assert (
        eff.values.recent_notes_max_chars == 3_000
        and eff.sources["recent_notes_max_chars"] == "space"
    )
    assert eff.values.recall_max_k == 20 and eff.sources["recall_max_k"] == "default"
    other_org = settings.get(MemoryContext(user_id="bob", org_id="globex"))
    assert other_org.values.recall_default_k == 6


def test_change_takes_effect_on_next_read_without_restart(backend: Backend) -> None:
    reader = _settings(backend)
    writer = _settings(backend)
    assert reader.get(CTX).values.masking_keep_recent == 5
    writer.update("org", CTX, set={"masking_keep_recent": 9})
    assert reader.get(CTX).values.masking_keep_recent == 9


def test_lock_refuses_lower_writes_and_ignores_older_values(backend: Backend) -> None:
    settings = _settings(backend)
    settings.update("org", CTX, set={"summarization_trigger_ratio": 0.7})
    settings.update("user", CTX, set={"summarization_trigger_ratio": 0.6})
    settings.update(
        "platform",
        CTX,
        set={"summarization_trigger_ratio": 0.85},
        lock=["summarization_trigger_ratio"],
    )
    eff = settings.get(CTX)
    assert eff.values.summarization_trigger_ratio == 0.85
    assert eff.ignored["summarization_trigger_ratio"] == ["org", "user"]
    before = backend.store.get(layer_namespace("org", CTX), LAYER_KEY)  # type: ignore[arg-type]
    with pytest.raises(LockedSettingError, match="summarization_trigger_ratio"):
        settings.update("org", CTX, set={"summarization_trigger_ratio": 0.5, "flush": False})
    after = backend.store.get(layer_namespace("org", CTX), LAYER_KEY)  # type: ignore[arg-type]
    assert before is not None and after is not None and after.value == before.value
    settings.update("platform", CTX, unlock=["summarization_trigger_ratio"])
    assert settings.get(CTX).values.summarization_trigger_ratio == 0.6


def test_stored_values_out_of_bounds_are_clamped_at_read(backend: Backend) -> None:
    """A record stored before its bounds tightened is clamped, and kept as stored."""
    settings = _settings(backend)
    record = {"values": {"profile_max_tokens": 50_000, "masking_trigger_ratio": 0.0}}
    backend.store.put(layer_namespace("org", CTX), LAYER_KEY, {**record, "locked": []})  # type: ignore[arg-type]
    eff = settings.get(CTX)
    assert eff.values.profile_max_tokens == 8_000
    assert eff.values.masking_trigger_ratio == 0.05
    assert eff.clamped["profile_max_tokens"].stored == 50_000
    assert eff.clamped["profile_max_tokens"].effective == 8_000
    stored = backend.store.get(layer_namespace("org", CTX), LAYER_KEY)  # type: ignore[arg-type]
    assert stored is not None and stored.value["values"]["profile_max_tokens"] == 50_000


def test_related_settings_stay_consistent(backend: Backend) -> None:
    settings = _settings(backend)
    settings.update("org", CTX, set={"document_soft_limit_chars": 60_000})
    eff = settings.get(CTX)
    assert eff.values.document_soft_limit_chars == eff.values.document_hard_limit_chars == 25_000
    assert eff.clamped["document_soft_limit_chars"].stored == 60_000


def test_use_platform_default_clears_the_field(backend: Backend) -> None:
    settings = _settings(backend)
    settings.update("platform", CTX, set={"recall_default_k": 6})
    settings.update("org", CTX, set={"recall_default_k": 3, "flush": False})
    settings.update("org", CTX, clear=["recall_default_k"])
    eff = settings.get(CTX)
    assert eff.values.recall_default_k == 6 and eff.sources["recall_default_k"] == "platform"
    assert eff.values.flush is False
    stored = backend.store.get(layer_namespace("org", CTX), LAYER_KEY)  # type: ignore[arg-type]
    assert stored is not None and "recall_default_k" not in stored.value["values"]
    settings.update("platform", CTX, set={"recall_default_k": 7})
    assert settings.get(CTX).values.recall_default_k == 7


@pytest.mark.parametrize(
    ("layer", "changes", "error"),
    [
        ("org", {"no_such_setting": 1}, "unknown setting 'no_such_setting'"),
        ("org", {"recall_default_k": "many"}, "'recall_default_k': 'many' is malformed"),
        ("org", {"flush": "sometimes"}, "'flush': 'sometimes' is malformed"),
        ("org", {"thread_policy": "forever"}, "'thread_policy': 'forever' is malformed"),
        ("user", {"profile": False}, "'profile' can only be set at the platform layer"),
        ("org", {"compaction_manual": True}, "only be set at the platform layer"),
        ("space", {"profile_user": False}, "only be set at the user layer"),
        ("bogus", {"flush": False}, "unknown settings layer"),
    ],
)
def test_bad_writes_are_named_and_change_nothing(
    backend: Backend, layer: Any, changes: dict[str, Any], error: str
) -> None:
    settings = _settings(backend)
    settings.update("org", CTX, set={"note_max_chars": 1_000})
    with pytest.raises(SettingsError, match=error):
        settings.update(layer, CTX, set={"recall_max_k": 12, **changes})
    eff = settings.get(CTX)
    assert eff.values.recall_max_k == 20
    assert eff.values.note_max_chars == 1_000


def test_lower_layers_cannot_lock(backend: Backend) -> None:
    with pytest.raises(SettingsError, match="only the platform layer can lock"):
        _settings(backend).update("org", CTX, lock=["flush"])


def test_writing_a_layer_needs_its_id(backend: Backend) -> None:
    with pytest.raises(SettingsError, match="space_id"):
        _settings(backend).update("space", MemoryContext(user_id="ann"), set={"flush": False})


def test_env_switches_set_the_platform_layer(backend: Backend) -> None:
    for off in ("false", "0", "no", "off", "OFF"):
        assert _settings(backend, MEMORY_FLUSH=off).get(CTX).values.flush is False
    on = _settings(backend, MEMORY_COMPACTION_MANUAL="true", MEMORY_NOTE_MAX_CHARS="1200")
    eff = on.get(CTX)
    assert eff.values.compaction_manual is True and eff.sources["compaction_manual"] == "env"
    assert eff.values.note_max_chars == 1_200
    assert _settings(backend).get(CTX).values.compaction_manual is False
    tools = _settings(backend, MEMORY_MASKING_EXCLUDED_TOOLS="search, fetch")
    assert tools.get(CTX).values.masking_excluded_tools == ("search", "fetch")
    assert env_var("flush") == "MEMORY_FLUSH"


def test_env_wins_over_stored_layers_and_locks(backend: Backend) -> None:
    _settings(backend).update("org", CTX, set={"flush": False})
    assert _settings(backend).get(CTX).values.flush is False
    assert _settings(backend, MEMORY_FLUSH="on").get(CTX).values.flush is True
    locked = _settings(backend, MEMORY_LOCKED="recall_default_k")
    locked.update("platform", CTX, set={"recall_default_k": 6})
    assert locked.get(CTX).values.recall_default_k == 6
    with pytest.raises(LockedSettingError):
        locked.update("user", CTX, set={"recall_default_k": 3})


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"MEMORY_FLUSH": "maybe"}, "MEMORY_FLUSH"),
        ({"MEMORY_RECALL_MAX_K": "lots"}, "MEMORY_RECALL_MAX_K"),
        ({"MEMORY_LOCKED": "flush,nope"}, "unknown setting 'nope'"),
    ],
)
def test_malformed_env_is_named(backend: Backend, env: dict[str, str], error: str) -> None:
    with pytest.raises(SettingsError, match=error):
        LayeredSettings(backend.store, environ=env)


async def test_async_twin(abackend: Backend) -> None:
    settings = LayeredSettings(abackend.store, environ={})
    await settings.aupdate("space", CTX, set={"recent_notes_max_chars": 2_500})
    eff = await settings.aget(CTX)
    assert (
        eff.values.recent_notes_max_chars == 2_500
        and eff.sources["recent_notes_max_chars"] == "space"
    )
    with pytest.raises(LockedSettingError):
        await settings.aupdate("platform", CTX, lock=["recent_notes_max_chars"])
        await settings.aupdate("user", CTX, set={"recent_notes_max_chars": 1_000})
    assert (await settings.aget(CTX)).values.recent_notes_max_chars == 4_000


def test_docs_settings_table_lists_every_setting() -> None:
    from memory_plugin.settings.table import settings_table

    page = (Path(__file__).parent.parent / "docs" / "settings.md").read_text()
    assert settings_table() in page
