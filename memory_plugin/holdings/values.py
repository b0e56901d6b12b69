"""The building blocks of a kind's stored-value schema (each kind's privacy module types its
values with them; an import checks every item against its kind's schema)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr


def _instant(text: str) -> str:
    datetime.fromisoformat(text)
    return text


def _day(text: str) -> str:
    date.fromisoformat(text)
    return text


Instant = Annotated[StrictStr, AfterValidator(_instant)]
Day = Annotated[StrictStr, AfterValidator(_day)]
Version = Annotated[StrictInt, Field(ge=1)]
Position = Annotated[StrictInt, Field(ge=1)]
Count = Annotated[StrictInt, Field(ge=0)]
Origin = dict[str, Any] | None


class StoredValue(BaseModel):
    """A stored value: the fields its reader needs, typed; other fields are kept as stored."""

    model_config = ConfigDict(strict=True, extra="allow")


class Deletion(StoredValue):
    """What a tombstone records of a delete (never the deleted text)."""

    deleted: Literal[True] = True
    deleted_at: Instant
    deletion: Origin = None
