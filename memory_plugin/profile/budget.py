"""Keeping the profile within its token budget: condense with the model, and as a last resort
drop bullets (Recent Topics first, then the last bullets of the other sections) behind the
truncation marker, so the frontmatter and the sections stay valid. A profile that fits carries
no marker, so the marker goes once the profile fits again. A condensation the guard refuses,
or one that fails or times out, leaves the profile to truncation."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from langchain_core.language_models import BaseChatModel

from memory_plugin.events import emit
from memory_plugin.models.replies import RejectedReply
from memory_plugin.plans import ModelCall, Plan
from memory_plugin.profile.document import RECENT, SECTIONS, Profile, render
from memory_plugin.profile.guard import check_condensation, proposed
from memory_plugin.profile.naming import NAME
from memory_plugin.profile.prompts import condense_messages
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
_DROP_ORDER = (RECENT, *[s for s in reversed(SECTIONS) if s != RECENT])


def body(profile: Profile) -> str:
    """The profile without its frontmatter, as the model sees it."""
    text = render(profile)
    return text[text.index("# User Memory") :].strip()


def size(profile: Profile, counter: TokenCounter) -> int:
    """The profile's size in tokens."""
    return counter.count_text(render(profile))


def truncate(profile: Profile, budget: int, counter: TokenCounter) -> Profile:
    """Drop bullets until the profile fits, marking it truncated; unmarked if it fits."""
    profile = replace(profile, truncated=False)
    if size(profile, counter) <= budget:
        return profile
    sections = {s: list(profile.bullets(s)) for s in SECTIONS}
    candidate = profile
    for section in _DROP_ORDER:
        while sections[section]:
            sections[section].pop(0 if section == RECENT else -1)
            frozen = {s: tuple(b) for s, b in sections.items()}
            candidate = replace(profile, truncated=True).with_sections(frozen)
            if size(candidate, counter) <= budget:
                return candidate
    return candidate


def _condensed_plan(
    profile: Profile, target: int, model: BaseChatModel, now: datetime, timeout: float | None
) -> Plan[Profile | None]:
    try:
        reply = yield ModelCall(model, condense_messages(body(profile), target), timeout=timeout)
        condensed = proposed(reply, profile, now)
        check_condensation(profile, condensed)
    except RejectedReply as exc:
        logger.warning("profile condensation discarded: %s; truncating instead", exc.reason)
        emit(NAME, "discarded", "profile", step="condensation", reason=exc.reason)
        return None
    except Exception:
        logger.warning("profile condensation failed; truncating instead", exc_info=True)
        return None
    return condensed


def fit_plan(
    profile: Profile,
    budget: int,
    target_ratio: float,
    model: BaseChatModel,
    counter: TokenCounter,
    now: datetime,
    timeout: float | None = None,
) -> Plan[Profile]:
    """The profile within budget: condensed by the model (within `timeout` seconds) when over
    it, truncated if that fails, is refused or is still too long."""
    profile = replace(profile, truncated=False)
    if size(profile, counter) <= budget:
        return profile
    condensed = yield from _condensed_plan(profile, int(budget * target_ratio), model, now, timeout)
    if condensed is not None and size(condensed, counter) <= budget:
        return condensed
    return truncate(condensed or profile, budget, counter)
