"""Shutdown steps that may block (a flush, a join, a commit), bounded: SIGTERM always ends the process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable

logger = logging.getLogger("collector.pipeline")


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
