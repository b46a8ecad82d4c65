"""Writing a line longer than ``PIPE_BUF`` within the write timeout, whole or not at all.

A pipe takes a write of at most ``PIPE_BUF`` bytes (4,096 on Linux) whole or not at all,
and ``poll`` says when it has room for one: ``_output`` relies on that for every line up
to that size. A longer write on a blocking descriptor waits for the reader as long as it
takes (a stalled reader: forever), and a non-blocking one takes what fits and leaves the
rest: half a line. Neither keeps the bound, nor the line whole. So a long line:

1. waits, within what is left of the bound, until the pipe has room for all of it (Linux
   tells: ``F_GETPIPE_SZ`` is the pipe's size and ``FIONREAD`` the bytes queued; the
   kernel fills pages, so the estimate counts every queued page as full and one more as
   wasted); without room by then it is dropped whole (``write_timeouts``);
2. is written without blocking and without touching the descriptor's flags, which the
   service and other processes share: ``pwritev2(RWF_NOWAIT)`` on a pipe, ``send`` with
   ``MSG_DONTWAIT`` on a socket; a socket's or terminal's room is not known, so step 1
   passes at once there;
3. if the stream took only part (the estimate was wrong, another process wrote between),
   the rest is written as the reader makes room, within the bound.

The trade-off, when a begun line cannot be finished within the bound (the reader stalled
between steps 1 and 3): the bound wins. The fragment is counted (``partial_write``) and
the next line starts on a new line, so a reader sees one truncated line, never two glued
together. Where no non-blocking write exists (no ``RWF_NOWAIT``: Linux before 4.14, other
systems), a long line is written as before, blocking: the bound is Linux's.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import stat
import time
from collections.abc import Callable
from typing import Final

# The longest write a pipe takes whole or not at all (POSIX's minimum where unknown).
PIPE_BUF: Final = getattr(select, "PIPE_BUF", 512)
PAGE: Final = 4096  # a pipe's buffer is pages; the kernel fills one before the next
_F_GETPIPE_SZ: Final = 1032
# How long the first wait for room sleeps; each next one doubles, up to _LONGEST_NAP.
_FIRST_NAP: Final = 0.0005
_LONGEST_NAP: Final = 0.01

NoWait = Callable[[memoryview], int]  # bytes taken; raises BlockingIOError when none fit


class Unfinished(Exception):
    """``landed`` bytes of the line are on the stream (0: none), and the bound ran out."""

    def __init__(self, landed: int) -> None:
        super().__init__("the stream took part of a line")  # never the line itself
        self.landed = landed


def _pipe_room(fd: int) -> int | None:
    """Bytes a pipe surely takes now, counting whole pages; None when it does not say."""
    try:
        import fcntl
        import termios

        size = fcntl.fcntl(fd, _F_GETPIPE_SZ)
        queued = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")
    except (ImportError, OSError):
        return None
    pages_used = -(-queued // PAGE) + 1  # whole pages, and the reader's part-read one
    return max(0, size // PAGE - pages_used) * PAGE


def _pwritev_nowait(fd: int) -> NoWait | None:
    flag = getattr(os, "RWF_NOWAIT", None)
    if flag is None or not hasattr(os, "pwritev"):
        return None

    def write(view: memoryview) -> int:
        return os.pwritev(fd, [view], -1, flag)  # -1: the current position, as write

    try:  # an empty write: does the kernel accept the flag here?
        write(memoryview(b""))
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ESPIPE, errno.ENOSYS):
            return None
    return write


def _send_nowait(fd: int) -> NoWait:
    def write(view: memoryview) -> int:
        sock = socket.socket(fileno=fd)
        try:
            return sock.send(view, socket.MSG_DONTWAIT)
        finally:
            sock.detach()  # the descriptor stays the stream's

    return write


class LongLines:
    """How one pollable descriptor takes lines longer than ``PIPE_BUF``."""

    def __init__(self, fd: int, ready: Callable[[int], list[tuple[int, int]]]) -> None:
        self._ready = ready
        mode = os.fstat(fd).st_mode
        self._room: Callable[[], int | None] = (
            (lambda: _pipe_room(fd)) if stat.S_ISFIFO(mode) else (lambda: None)
        )
        self.nowait: NoWait | None = (
            _send_nowait(fd) if stat.S_ISSOCK(mode) else _pwritev_nowait(fd)
        )

    def write(self, line: bytes, seconds: float) -> None:
        """Write ``line`` whole within ``seconds``; raises ``Unfinished`` otherwise."""
        nowait = self.nowait
        assert nowait is not None
        deadline = time.monotonic() + seconds
        size = len(line)
        nap = _FIRST_NAP
        while (room := self._room()) is not None and room < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unfinished(0)
            # ``poll`` says "room for PIPE_BUF", already true here: sleep and look again.
            time.sleep(min(nap, left))
            nap = min(nap * 2, _LONGEST_NAP)
        view = memoryview(line)
        landed = 0
        while True:
            try:
                landed += nowait(view[landed:])
            except BlockingIOError:
                pass
            except OSError:
                raise Unfinished(landed) from None
            if landed >= size:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unfinished(landed)
            self._ready(max(1, int(left * 1000)))


def long_lines(fd: int, ready: Callable[[int], list[tuple[int, int]]]) -> LongLines | None:
    """``LongLines`` for ``fd``, or None where no write can be made not to block."""
    try:
        writer = LongLines(fd, ready)
    except OSError:
        return None
    return writer if writer.nowait is not None else None
