"""The typed settings object: every default from the reference documents, with bounds.

Each numeric field has admin bounds (`ge`/`le`). Constructing MemorySettings checks every value
given like a settings write (exact type, finite, within bounds) and raises SettingsError naming
the field; values stored in a settings layer before a bound changed are clamped at read time.
The checks of a single value the constructor needs live here too (`check_value` and its
helpers); memory_plugin.settings.values builds the lenient read-time parsing on them.
`json_schema_extra` carries the reason for the bound and, for operator switches, the layers
allowed to write the field.
"""

from __future__ import annotations

import difflib
import math
from functools import cache
from typing import Any, Literal, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from memory_plugin.errors import SettingsError

LAYERS = ("platform", "org", "space", "user")
PLATFORM_ONLY = ("platform",)
ADMIN_LAYERS = ("platform", "org", "space")
# (a, b): the effective a never exceeds the effective b.
RELATIONS = (
    ("document_soft_limit_chars", "document_hard_limit_chars"),
    ("recall_default_k", "recall_max_k"),
    ("summarization_keep_ratio", "summarization_trigger_ratio"),
    ("masking_min_clear_ratio", "masking_batch_ratio"),
    ("recall_rerank_keep", "recall_rerank_candidates"),
)
LOWER_ONLY = ("recent_window_messages",)
"""Settings a layer below the platform may only lower (thread-and-agent-memory.md: the recent
window "can only lower it"): such a write above the platform's value is refused, and at read
time each layer below the platform can only lower what the layers above it give."""


def _f(default: Any, reason: str, *, layers: tuple[str, ...] = LAYERS, **bounds: Any) -> Any:
    return Field(default, json_schema_extra={"reason": reason, "layers": list(layers)}, **bounds)


class MemorySettings(BaseModel):
    """Every memory_plugin setting with its platform default."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False
    )

    def __init__(self, **values: Any) -> None:
        checked = {name: check_value(name, value) for name, value in values.items()}
        try:
            super().__init__(**checked)
        except ValidationError as exc:
            raise SettingsError(f"invalid settings: {exc.errors()[0]['msg']}") from None
        for low, high in RELATIONS:
            if getattr(self, low) > getattr(self, high):
                raise SettingsError(
                    f"setting {low!r} ({getattr(self, low)}) must not exceed {high!r} "
                    f"({getattr(self, high)})"
                )

    # Backends
    store_timeout_seconds: float = _f(
        5.0,
        "a store that is down costs a turn at most this (pool timeout)",
        ge=0.5,
        le=120.0,
        layers=PLATFORM_ONLY,
    )
    exit_wait_seconds: float = _f(
        30.0,
        "a process waits at most this at exit for background memory work (a profile update)",
        ge=0.0,
        le=600.0,
        layers=PLATFORM_ONLY,
    )

    # Memory kinds (the prebuilt graph wires and binds the tools of the kinds that are on)
    scoped_memory: bool = _f(True, "curated documents and dated notes")
    context_management: bool = _f(
        True, "masking, compaction and the journal in the prebuilt graph", layers=PLATFORM_ONLY
    )

    # Scoped documents and notes (scoped-memory-documents-and-notes.md)
    document_soft_limit_chars: int = _f(
        18_000, "warn before a document gets expensive to inject", ge=1_000, le=100_000
    )
    document_hard_limit_chars: int = _f(
        25_000, "a document past this is compressed first; bounds prompt size", ge=2_000, le=200_000
    )
    note_max_chars: int = _f(2_000, "one note is one fact, not a dump", ge=100, le=10_000)
    recall_default_k: int = _f(8, "notes recall returns when k is not given", ge=1, le=100)
    recall_max_k: int = _f(20, "largest k recall honours; larger k is clamped", ge=1, le=100)
    recall_candidates: int = _f(
        100,
        "notes each search (keyword, semantic) proposes to recall's ranking, whatever k",
        ge=10,
        le=1_000,
    )
    recent_notes_max_chars: int = _f(4_000, "size of the recent-notes block", ge=500, le=32_000)
    recent_notes_days: int = _f(2, "today and yesterday (UTC) ride along", ge=1, le=14)
    consolidation_min_age_days: int = _f(
        7, "notes younger than this stay out of nightly consolidation", ge=1, le=365
    )
    consolidation_max_scopes: int = _f(50, "scopes per nightly run", ge=1, le=10_000)
    consolidation_max_notes: int = _f(200, "notes per scope per run", ge=1, le=5_000)
    consolidation_max_chars: int = _f(
        20_000, "note characters per scope per run", ge=1_000, le=200_000
    )
    flush: bool = _f(True, "pre-compaction flush note (MEMORY_FLUSH)")
    flush_max_chars: int = _f(500, "length of the flush note", ge=50, le=4_000)
    flush_timeout_seconds: float = _f(5.0, "the flush never holds a turn long", ge=0.5, le=60.0)
    compression_timeout_seconds: float = _f(
        60.0, "compressing an over-long document gives up after this", ge=1.0, le=600.0
    )
    consolidation_timeout_seconds: float = _f(
        120.0, "one scope's nightly consolidation call gives up after this", ge=1.0, le=1_800.0
    )

    # Context management (context-management.md)
    masking: bool = _f(True, "admin switch for tool-output masking", layers=("platform", "org"))
    masking_trigger_ratio: float = _f(
        0.55, "mask once the transcript passes this share of the window", ge=0.05, le=0.95
    )
    masking_keep_recent: int = _f(5, "most recent tool results never masked", ge=1, le=100)
    masking_min_clear_ratio: float = _f(
        0.15, "mask only when a pass clears at least this share of the window", ge=0.01, le=0.5
    )
    masking_batch_ratio: float = _f(
        0.3,
        (
            "a pass waits until it can clear this share of the window (fewer, larger passes "
            "keep the prompt cache), unless the input nears the compaction trigger"
        ),
        ge=0.01,
        le=0.9,
    )
    masking_payback_calls: int = _f(
        3,
        (
            "a pass that is not urgent runs only when the cache reads it saves (at "
            "prompt_cache_read_ratio) over this many calls pay for re-billing the rest of the "
            "request in full once"
        ),
        ge=1,
        le=1_000,
    )
    masking_excluded_tools: tuple[str, ...] = _f((), "tools whose output is never masked")
    masking_defers_to_compaction: bool = _f(
        True,
        (
            "a masking pass due within masking_min_clear_ratio of the compaction trigger "
            "compacts there instead (one prompt-cache break instead of two, a smaller request)"
        ),
    )
    summarization_trigger_ratio: float = _f(
        0.80,
        (
            "compact when the thread (transcript with masked outputs counted at full size, "
            "running summary, system prompt and memory blocks) crosses this share of the "
            "window"
        ),
        ge=0.10,
        le=0.95,
    )
    compaction_on_break_ratio: float = _f(
        0.25,
        (
            "on a call whose request changes anyway (a removal of memory the session showed), "
            "compact from this share of the window, keeping the latest exchange: the break "
            "re-bills the request in full there, so the next calls start from a small one"
        ),
        ge=0.05,
        le=0.95,
    )
    summarization_keep_ratio: float = _f(
        0.10, "share of the window kept verbatim after compaction", ge=0.01, le=0.5
    )
    fallback_context_window: int = _f(
        200_000, "window used when the model reports none", ge=4_096, le=10_000_000
    )
    compaction_manual: bool = _f(
        False, "offer Summarize now (MEMORY_COMPACTION_MANUAL)", layers=PLATFORM_ONLY
    )
    summary_timeout_seconds: float = _f(
        30.0, "a compaction or rolling summary call never holds a turn longer", ge=1.0, le=600.0
    )
    summary_input_chars: int = _f(
        16_000,
        (
            "how much of the messages a summary or flush note reads from its transcript: past "
            "it, the longest texts are cut to one length, each keeping its start"
        ),
        ge=1_000,
        le=10_000_000,
    )
    prompt_cache_read_ratio: float = _f(
        0.10,
        (
            "what the agent's provider bills for cached input, as a share of its input price: "
            "a compaction repeats the agent's last request to ask for the summary (read from "
            "the provider's prompt cache) when that bills less than a transcript, 1 never does; "
            "a masking pass waits until it pays for its cache break (masking_payback_calls)"
        ),
        ge=0.0,
        le=1.0,
    )
    prompt_cache_seconds: float = _f(
        300.0,
        (
            "how long the provider keeps a request cached: a compaction later than this after "
            "the agent's last call sends a transcript"
        ),
        ge=0.0,
        le=86_400.0,
    )

    # Thread and agent memory (thread-and-agent-memory.md)
    thread_policy: Literal["summarize", "recent_window"] = _f(
        "summarize", "ratio compaction, or the recent-window policy"
    )
    recent_window_messages: int = _f(
        20,
        "messages in the recent window; layers below the platform can only lower it",
        ge=1,
        le=200,
    )
    rolling_summary_messages: int = _f(
        10, "messages out of the window before a summary pass", ge=1, le=200
    )
    rolling_summary_tokens: int = _f(
        8_000, "tokens out of the window before a summary pass", ge=500, le=200_000
    )

    # Bounded entry memory (bounded-entry-memory.md)
    bounded_memory: bool = _f(False, "the memory tool and its frozen memory/user blocks")
    bounded_memory_chars: int = _f(
        2_200, "the agent's own notes (target memory), whole joined text", ge=200, le=20_000
    )
    bounded_user_chars: int = _f(
        1_375, "who the user is (target user), whole joined text", ge=200, le=20_000
    )
    session_idle_minutes: int = _f(
        30, "an idle gap this long starts a new session (fresh frozen blocks)", ge=1, le=10_080
    )

    # User profile memory (user-profile-memory.md)
    profile: bool = _f(True, "operator feature flag for the user profile", layers=PLATFORM_ONLY)
    profile_space: bool = _f(True, "space switch for the user profile", layers=("space",))
    profile_user: bool = _f(True, "the user's own opt-in", layers=("user",))
    web_search: bool = _f(False, "web search enabled for the space", layers=("space",))
    profile_with_web_search: bool = _f(
        False, "operator override: profile and web search together", layers=PLATFORM_ONLY
    )
    profile_max_tokens: int = _f(2_000, "profile token budget", ge=500, le=8_000)
    profile_condense_ratio: float = _f(
        0.9, "condensation aims at this share of the budget", ge=0.5, le=0.99
    )
    profile_timeout_seconds: float = _f(
        30.0, "post-turn profile consolidation gives up after this", ge=1.0, le=600.0
    )

    # Agent memory entries (thread-and-agent-memory.md: the Memory capability)
    agent_memory: bool = _f(
        False, "the Memory capability: memory_store/recall/forget and flush entries"
    )
    pinned_max_entries: int = _f(10, "pinned agent entries injected first", ge=0, le=10)
    pinned_min_importance: float = _f(
        0.7, "user_profile entries pinned from this importance", ge=0.0, le=1.0
    )

    # Retrieval rerank (context-management.md: Retrieval rerank; memory_plugin.scoped.rerank)
    recall_rerank: bool = _f(
        False, "one model call per recall reorders the fused candidates", layers=ADMIN_LAYERS
    )
    recall_rerank_model: str | None = _f(
        None,
        "model spec for the reranker, or cross-encoder:<sentence-transformers model>; "
        "none uses the maintenance model",
        layers=PLATFORM_ONLY,
    )
    recall_rerank_keep: int = _f(
        8, "rerank only when a search has more results than this", ge=1, le=100
    )
    recall_rerank_candidates: int = _f(
        24, "the top fused results the reranker reorders", ge=2, le=100
    )
    recall_rerank_timeout_ms: int = _f(
        1_500, "a rerank call never holds a recall longer (fused order kept)", ge=50, le=60_000
    )

    # The model of memory's own work (memory_plugin.models.maintenance)
    maintenance_model: str | None = _f(
        None,
        "model spec for summaries, flush notes, profile, compression and consolidation; "
        "none uses the graph's maintenance model",
        layers=PLATFORM_ONLY,
    )

    # The safety screen's optional judge (docs/safety.md; memory_plugin.safety.judge)
    screen_judge: Literal["off", "team", "all"] = _f(
        "off",
        "the maintenance model judges whether text the rules passed is an instruction to a "
        "model: for team memory, or all memory",
        layers=PLATFORM_ONLY,
    )
    screen_judge_failure: Literal["refuse", "allow"] = _f(
        "refuse",
        "when the judge or an operator check fails (error, timeout, garbage), team memory is "
        "refused or stored; private memory is always stored",
        layers=PLATFORM_ONLY,
    )
    screen_judge_timeout_seconds: float = _f(
        10.0, "a judge call never holds a write longer", ge=0.5, le=120.0, layers=PLATFORM_ONLY
    )


@cache
def field_bounds(name: str) -> tuple[float | None, float | None]:
    """The (lower, upper) admin bounds of a setting, None where unbounded."""
    low: float | None = None
    high: float | None = None
    for meta in MemorySettings.model_fields[name].metadata:
        low = getattr(meta, "ge", low)
        high = getattr(meta, "le", high)
    return low, high


@cache
def field_layers(name: str) -> tuple[str, ...]:
    """The layers allowed to write a setting."""
    extra = MemorySettings.model_fields[name].json_schema_extra
    assert isinstance(extra, dict)
    layers = extra["layers"]
    assert isinstance(layers, list)
    return tuple(str(layer) for layer in layers)


def known_field(name: str) -> str:
    """Return name if it is a setting, else raise naming the unknown field (and the closest)."""
    if name not in MemorySettings.model_fields:
        raise SettingsError(f"unknown setting {name!r}{did_you_mean(name)}")
    return name


def did_you_mean(name: str) -> str:
    """`; did you mean 'x'?` for the setting closest to name, or nothing."""
    close = difflib.get_close_matches(name.lower(), MemorySettings.model_fields, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


@cache
def field_adapter(name: str) -> TypeAdapter[Any]:
    """The pydantic adapter validating and dumping one setting's values."""
    annotation = MemorySettings.model_fields[name].annotation
    assert annotation is not None
    return TypeAdapter(annotation)


def validate_field(name: str, value: Any, *, strict: bool) -> Any:
    """The value validated against the setting's type; a SettingsError names it when malformed."""
    try:
        return field_adapter(name).validate_python(value, strict=strict)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise SettingsError(f"setting {name!r}: {value!r} is malformed ({problem})") from None


def is_number(name: str, value: Any) -> bool:
    """Whether the value is a number (not a bool); a non-finite float is a SettingsError."""
    if isinstance(value, float) and not math.isfinite(value):
        raise SettingsError(f"setting {name!r}: {value!r} is not a finite number")
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_bounds(name: str, value: Any) -> None:
    """Raise a SettingsError when a number is outside the setting's admin bounds."""
    if not is_number(name, value):
        return
    low, high = field_bounds(name)
    if (low is not None and value < low) or (high is not None and value > high):
        raise SettingsError(f"setting {name!r}: {value!r} is out of range ({low} to {high})")


def check_value(name: str, value: Any) -> Any:
    """Validate a value being written: the exact type (a list stands for a tuple), a finite
    number within the setting's bounds; returns it as stored (JSON)."""
    known_field(name)
    if get_origin(MemorySettings.model_fields[name].annotation) is tuple and isinstance(
        value, list
    ):
        value = tuple(value)
    parsed = validate_field(name, value, strict=True)
    check_bounds(name, parsed)
    return field_adapter(name).dump_python(parsed, mode="json")
