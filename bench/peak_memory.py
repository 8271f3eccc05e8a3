"""The memory a replay adds to its process at its peak: the resident set's high-water mark.

Each job runs in a process of its own. Before the replay the process is
collected, the C allocator hands its free memory back to the system
(``malloc_trim``: memory freed by imports and setup would otherwise take the
replay's first allocations without the resident set growing), the kernel's
high-water mark of the resident set is reset (``/proc/self/clear_refs``,
Linux 4.0 and later) and the resident size is noted. After the replay, the
mark less that size is the replay's peak.

It counts everything the system's work made resident, Python objects and
native allocations alike (a Rust tokenizer's buffers, SQLite's page cache), and
costs the replay nothing. ``tracemalloc``, which the bench used before, traced
Python allocations only and made the allocation-heavy peers 3 to 4 times
slower (LangChain's replay of the generated conversation: 27.6 s traced, 7.6 s
untraced). On the same replays the two agree within a few MiB where a system
allocates Python objects only (LangChain's checkpoints: 72.2 MiB traced, 73.5
MiB resident).

Where the mark cannot be reset or read (not Linux, or no glibc), :meth:`start`
returns False and :meth:`peak` None: the figure is left out.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import re
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
_RESET_HIGH_WATER_MARK = "5"
"""What ``clear_refs`` takes to reset the peak resident set size (``VmHWM``)."""


def _status_kib(field: str) -> int:
    """The ``field`` line of ``/proc/self/status``, in KiB."""
    match = re.search(rf"^{field}:\s+(\d+) kB$", _STATUS.read_text(), re.MULTILINE)
    if match is None:
        raise OSError(f"{_STATUS} has no {field} line")
    return int(match.group(1))


def _trim_c_heap() -> None:
    """Give the C allocator's free memory back to the system (glibc's ``malloc_trim``)."""
    name = ctypes.util.find_library("c")
    if name is None:
        raise OSError("no C library found")
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "malloc_trim"):
        raise OSError(f"{name} has no malloc_trim")
    libc.malloc_trim(0)


class PeakMemory:
    """The rise of the resident set's high-water mark from :meth:`start` to :meth:`peak`."""

    def __init__(self) -> None:
        self._baseline: int | None = None

    def start(self) -> bool:
        """Collect, trim, reset the high-water mark and note the resident size; whether it could."""
        gc.collect()
        try:
            _trim_c_heap()
            _CLEAR_REFS.write_text(_RESET_HIGH_WATER_MARK)
            self._baseline = _status_kib("VmRSS")
        except OSError:
            self._baseline = None
        return self._baseline is not None

    def peak(self) -> int | None:
        """Bytes the high-water mark rose above the resident size at :meth:`start`, or None."""
        if self._baseline is None:
            return None
        try:
            high = _status_kib("VmHWM")
        except OSError:
            return None
        return max(0, high - self._baseline) * 1024
