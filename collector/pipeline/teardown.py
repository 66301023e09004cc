"""Shutdown steps that may block (a flush, a join, a commit), bounded: SIGTERM always ends the process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

logger = logging.getLogger("collector.pipeline.pipeline")


async def bounded(what: str, step: Callable[[], object], timeout_s: float) -> None:
    """`step()` on a daemon thread, awaited for at most `timeout_s`; past that it is named in the log and
    left behind. A daemon thread, not the loop's executor: an abandoned executor thread would still hold
    the process at exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def finish() -> None:
        if not done.done():
            done.set_result(None)

    def run() -> None:
        try:
            step()
        except Exception:
            logger.exception("shutdown of %s failed", what)
        finally:
            with contextlib.suppress(RuntimeError):  # the loop closed while this step was left behind
                loop.call_soon_threadsafe(finish)

    threading.Thread(target=run, name=f"shutdown {what}", daemon=True).start()
    try:
        await asyncio.wait_for(asyncio.shield(done), timeout_s)
    except TimeoutError:
        logger.error("shutdown: %s did not finish within %.0f s; exiting without it", what, timeout_s)


async def cancelled(tasks: Collection[asyncio.Task[Any]], what: str, timeout_s: float = 10.0) -> None:
    """Cancel `tasks` and wait until they ended, cancelling again while any still runs: Python 3.11's
    `asyncio.wait_for` swallows a cancellation that arrives just as what it awaits completes (fixed in
    3.12), and a task that lost its cancellation would hold the shutdown forever. Past `timeout_s`
    the rest are named in the log and left behind."""
    deadline = time.monotonic() + timeout_s
    pending = set(tasks)
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            logger.error(
                "shutdown: %d %s did not stop within %g s; exiting without them",
                len(pending),
                what,
                timeout_s,
            )
            break
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=min(0.2, remaining))
    for task in tasks:  # an exception is the task's own business now; retrieve it so none is reported
        if task.done() and not task.cancelled():
            task.exception()
