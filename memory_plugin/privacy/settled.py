"""Before a deletion or a forget: let the background jobs this process started land first (a
turn's profile update, its flush note), so that none writes back what is about to be removed.
A job another process runs can still land after it."""

from __future__ import annotations

import asyncio
import logging

from memory_plugin.background import await_every, wait_all

JOBS_WAIT = 30.0
logger = logging.getLogger(__name__)


def jobs_landed(what: str) -> None:
    """Wait, at most JOBS_WAIT seconds, for this process's background jobs before `what`."""
    if not wait_all(timeout=JOBS_WAIT):
        logger.warning("%s while background jobs still run", what)


async def ajobs_landed(what: str) -> None:
    """Async twin of jobs_landed."""
    try:
        await asyncio.wait_for(await_every(), JOBS_WAIT)
    except TimeoutError:
        logger.warning("%s while background jobs still run", what)
