"""Running a connection's jobs side by side, and telling a stop from a failure, on Python 3.11.

Why not `asyncio.TaskGroup`: on 3.11, a child that fails while the parent waits in the group's exit
cancels the parent and never takes that cancel back, so the parent's `cancelling()` stays raised for
good; a supervisor could then no longer tell the service stopping it from a job that failed. And when a
cancel arrives as a connection breaks, the closing client's error can replace the `CancelledError`;
`stopping()` is how the reconnect loops see that they are being stopped, not broken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


async def run_together(*jobs: Awaitable[None], what: str = "a job") -> None:
    """Run `jobs` until one fails (the others are cancelled, and what failed is raised in an
    ExceptionGroup) or all end. A cancel of the caller cancels them all and propagates as itself."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    errors = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
    if errors:
        raise BaseExceptionGroup(f"{what} failed", errors)


def stopping() -> bool:
    """Whether the running task has been asked to stop (cancelled), whatever exception is in flight."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
