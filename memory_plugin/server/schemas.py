"""The console's request and response models: what /openapi.json describes.

Every text a request body carries is text (no NUL, no lone surrogate) and has a size limit:
a document its largest hard limit plus the compression headroom, an entry its target's
largest limit, an agent entry the library's limits; each route then holds it to the limit
the caller's settings give.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from memory_plugin.agent.entries import CATEGORY_MAX, CONTENT_MAX
from memory_plugin.provenance import Provenance
from memory_plugin.server.limits import MAX_DOCUMENT_CHARS, largest_setting
from memory_plugin.settings import MemorySettings
from memory_plugin.storable import unstorable_character


def text_only(value: Any) -> Any:
    """The value itself, or ValueError naming the NUL or lone surrogate a string holds."""
    found = unstorable_character(value) if isinstance(value, str) else None
    if found is not None:
        raise ValueError(f"holds {found}, which is not text")
    return value


def json_text_only(value: Any) -> Any:
    """A JSON value whose every string, object keys included, is text (see text_only)."""
    text_only(value)
    if isinstance(value, dict):
        for key, item in value.items():
            text_only(key)
            json_text_only(item)
    elif isinstance(value, list):
        for item in value:
            json_text_only(item)
    return value


ENTRY_MAX = max(largest_setting("bounded_memory_chars"), largest_setting("bounded_user_chars"))
SETTINGS_COUNT = len(MemorySettings.model_fields)
DocumentText = Annotated[str, Field(max_length=MAX_DOCUMENT_CHARS), BeforeValidator(text_only)]
EntryText = Annotated[str, Field(max_length=ENTRY_MAX), BeforeValidator(text_only)]
AgentContent = Annotated[str, Field(max_length=CONTENT_MAX), BeforeValidator(text_only)]
AgentCategory = Annotated[str, Field(max_length=CATEGORY_MAX), BeforeValidator(text_only)]
SettingName = Annotated[str, Field(max_length=100), BeforeValidator(text_only)]
SettingNames = Annotated[list[SettingName], Field(max_length=SETTINGS_COUNT)]


class Body(BaseModel):
    """A request body: any field the route does not name (a user, an agent) is refused."""

    model_config = ConfigDict(extra="forbid")


class Error(BaseModel):
    """A refusal: what was wrong (403, 400, 409, 503), or "not found" (404)."""

    detail: str


class Note(BaseModel):
    """One dated note."""

    key: str
    day: str
    position: int
    text: str
    created_at: str
    consolidated: bool
    provenance: Provenance | None


class Document(BaseModel):
    """One version of a curated document."""

    text: str
    version: int
    updated_at: str
    chars: int
    provenance: Provenance | None


class Limits(BaseModel):
    """The document's soft and hard limits, in characters."""

    soft: int
    hard: int


class Switch(BaseModel):
    """Whether a memory feature is on for the caller, and why not (shown before any form)."""

    enabled: bool
    disabled_reason: str | None


class DocumentAnswer(BaseModel):
    """The current document (null before the first save), its limits, and whether scoped
    memory is on (off: saving and searching are refused)."""

    document: Document | None
    limits: Limits
    switch: Switch


class DocumentWrite(BaseModel):
    """A saved version: compressed when it had to be, with size warnings."""

    document: Document
    compressed: bool
    warnings: list[str]


class DocumentBody(Body):
    """A whole new document; `expected_version` is the version read (null: none yet)."""

    text: DocumentText
    expected_version: int | None


class RestoreBody(Body):
    """The version to save again as the current one."""

    version: int = Field(ge=1)


class History(BaseModel):
    """Every saved version, newest first."""

    versions: list[Document]


class Day(BaseModel):
    """The notes of one UTC day, newest first."""

    day: str
    notes: list[Note]


class NotesPage(BaseModel):
    """Days with notes, newest first; `older` is the `before` of the next page."""

    days: list[Day]
    older: str | None


class SearchHit(BaseModel):
    """A note that matches the query, and how well."""

    note: Note
    score: float


class SearchAnswer(BaseModel):
    """The best matching notes, best first."""

    hits: list[SearchHit]


class Deleted(BaseModel):
    """The key of the note deleted."""

    deleted: str


class ScopeLink(BaseModel):
    """A memory scope the caller can open."""

    kind: Literal["personal", "team"]
    workspace: str | None
    label: str
    path: str


class Me(BaseModel):
    """Who the token is, and the scopes it reaches."""

    user_id: str
    org_id: str | None
    agent_id: str | None
    workspaces: list[str]
    admin: list[str]
    scopes: list[ScopeLink]


class WorkspaceHeld(BaseModel):
    """A workspace the caller belongs to, and the memory the store holds there."""

    workspace: str
    personal: bool
    team: bool


class Workspaces(BaseModel):
    """The caller's workspaces."""

    workspaces: list[WorkspaceHeld]


class ScopeRun(BaseModel):
    """One scope of a consolidation run."""

    namespace: list[str]
    kind: Literal["personal", "team"]
    workspace_id: str | None
    user_id: str | None
    org_id: str | None
    status: str
    folded: int
    error: str | None


class JobRun(BaseModel):
    """One consolidation run and its results."""

    id: str
    job: str
    trigger: Literal["nightly", "manual"]
    by: str | None
    started_at: str
    finished_at: str | None
    status: Literal["running", "succeeded", "failed", "partial"]
    summary: str
    folded: int
    scopes: list[ScopeRun]


class JobRuns(BaseModel):
    """The last runs, newest first."""

    runs: list[JobRun]


class ProfileText(BaseModel):
    """The profile as Markdown, with when it was last updated and over how many turns."""

    markdown: str
    last_updated: str
    turn_count: int


class ProfileOperation(BaseModel):
    """One bullet-level change of the profile."""

    op: str
    section: str
    before: str | None
    after: str | None


class ProfileChange(BaseModel):
    """One profile write."""

    at: str
    operations: list[ProfileOperation]
    provenance: Provenance | None


class ProfileAnswer(BaseModel):
    """The caller's profile, whether it is on (and why not), and its change log."""

    enabled: bool
    reason: str
    blocked_by_web_search: bool
    profile: ProfileText | None
    changes: list[ProfileChange]


class OptedOut(BaseModel):
    """The opt-out's answer."""

    deleted: bool
    message: str


class BoundedEntry(BaseModel):
    """One bounded entry."""

    index: int
    text: str
    provenance: Provenance | None


class Target(BaseModel):
    """One bounded target: its entries and how full it is."""

    entries: list[BoundedEntry]
    used: int
    limit: int
    usage: str


class Bounded(BaseModel):
    """Both bounded targets of the caller and agent."""

    agent_id: str
    memory: Target
    user: Target


class BoundedWrite(BaseModel):
    """The write's message and both targets after it."""

    message: str
    memory: Target
    user: Target


class MemoryWrite(Body):
    """The `memory` tool's arguments; any other field (a user, an agent) is refused."""

    action: Literal["add", "replace", "remove"]
    target: Literal["memory", "user"]
    content: EntryText | None = None
    old_text: EntryText | None = None


class AgentEntry(BaseModel):
    """One agent memory entry, and whether the caller may change it."""

    key: str
    content: str
    category: str
    visibility: Literal["private", "shared", "read_only"]
    importance: float
    updated_at: str
    expires_at: str | None
    provenance: Provenance | None
    editable: bool


class AgentEntries(BaseModel):
    """The caller's private entries and the agent's shared ones, and whether agent memory
    is on for the caller (off: adding, editing and deleting are refused)."""

    agent_id: str
    entries: list[AgentEntry]
    switch: Switch


class AgentEntryBody(Body):
    """A new or edited agent entry."""

    content: AgentContent
    category: AgentCategory | None = None
    visibility: Literal["private", "shared", "read_only"] | None = None
    importance: float | None = Field(default=None, ge=0, le=1)


class SettingField(BaseModel):
    """One setting: its type, default, bounds and the layers that may set it."""

    name: str
    type: str
    default: Any
    description: str
    minimum: float | None
    maximum: float | None
    layers: list[str]


class LayerRecord(BaseModel):
    """What one layer stores, and whether the caller may change it."""

    values: dict[str, Any]
    locked: list[str]
    editable: bool


class ProfileSwitch(Switch):
    """Whether the user's profile switch can be used, and why not."""


class SettingsAnswer(BaseModel):
    """Effective and stored values side by side."""

    fields: list[SettingField]
    effective: dict[str, Any]
    env: list[str]
    locked: list[str]
    layers: dict[str, LayerRecord]
    profile_switch: ProfileSwitch


class SettingsBody(Body):
    """Changes to one layer: set values, clear them, (un)lock them (platform only)."""

    set: Annotated[
        dict[SettingName, Any], Field(max_length=SETTINGS_COUNT), AfterValidator(json_text_only)
    ] = Field(default_factory=dict)
    clear: SettingNames = Field(default_factory=list)
    lock: SettingNames = Field(default_factory=list)
    unlock: SettingNames = Field(default_factory=list)


class ThreadSummary(BaseModel):
    """One of the caller's threads: when it last changed and its last user message."""

    thread_id: str
    updated_at: str
    last_message: str | None


class ThreadsPage(BaseModel):
    """The caller's threads, newest first; `older` is the `before` of the next page;
    `summarize` says whether Summarize now is on for the caller."""

    threads: list[ThreadSummary]
    older: str | None
    summarize: Switch


class Summarized(BaseModel):
    """What Summarize now did."""

    status: str
    message: str
    kind: str
