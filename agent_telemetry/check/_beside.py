"""Two independent stages of the check at once, on two cores.

The bindings stage and the drift stage are each about a second of sqlglot work and share
nothing, so the drift stage runs in a forked child while this process runs the bindings
stage (``check`` runs in every CI job and pre-commit; its wall time is what people wait
for). Fork only where it is safe and helps: a single-threaded process (forking one with
threads can copy a held lock) on a machine with two or more usable cores. Anywhere
else, and if the child dies without an answer, the work runs here, in order.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
        and _usable_cores() > 1
    )


def _child(work: Callable[[], object], answer: Connection) -> None:
    try:
        outcome: tuple[bool, object] = (True, work())
    except Exception as exc:  # handed to the parent, which raises it there
        outcome = (False, exc)
    answer.send(outcome)
    answer.close()


def run_beside(first: Callable[[], T], second: Callable[[], U]) -> tuple[T, U]:
    """``(first(), second())``: ``second`` in a forked child while ``first`` runs here.
    An exception of either is raised here, ``first``'s before ``second``'s."""
    if not can_fork():
        return first(), second()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    # multiprocessing flushes stdout and stderr before it forks, so no text is written twice.
    child = context.Process(target=_child, args=(second, sender), daemon=True)
    child.start()
    sender.close()
    try:
        mine = first()
        try:
            ok, theirs = receiver.recv()
        except EOFError:  # the child died without an answer: do its work here
            return mine, second()
    finally:
        receiver.close()
        child.join(timeout=5)
        if child.is_alive():
            child.kill()
            child.join()  # reaped here, or a later os.wait() of this process gets it
    if not ok:
        assert isinstance(theirs, BaseException)
        raise theirs
    return mine, theirs
