"""Keep the service's resident memory close to what it really holds.

Camera frames are megabytes each and come and go ten times a second, in worker threads. With
glibc's defaults a freed frame stays in the process (the mmap threshold grows to the largest
block freed, so later frames come from the heap, which is rarely given back) and each worker
thread may get its own heap arena. A fixed mmap threshold hands every large buffer back to the
kernel when it is freed, and two arenas are enough for one event loop and its workers; on the
simulated table this keeps some 30 MB off the resident set. Elsewhere (not glibc) nothing is done.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger("smart_table.memory")

M_MMAP_THRESHOLD = -3  # glibc malloc.h
M_ARENA_MAX = -8


def limit_heap_growth(mmap_threshold: int = 256 * 1024, arenas: int = 2) -> bool:
    """Set glibc's malloc options for a frame-processing service; True when they took effect."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc: its own allocator, left alone
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    ok = bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(M_ARENA_MAX, arenas))
    log.debug("event=malloc_options mmap_threshold=%d arenas=%d ok=%s", mmap_threshold, arenas, ok)
    return ok
