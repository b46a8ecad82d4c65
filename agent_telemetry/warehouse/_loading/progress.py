"""Progress of a load: a rich bar on a terminal, nothing anywhere else.

The loader reports the bytes of each file it has read (compressed, if the file is)
as it reads them; storing the judged rows afterwards is one quick statement.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

# Below this much input a load takes well under a second: a bar would only flicker.
LONG_LOAD_BYTES = 8 << 20


class LoadProgress(Protocol):
    """What the loader reports while it works; bytes are of the file on disk."""

    def start_file(self, label: str, size: int) -> None: ...

    def update(self, done: int) -> None: ...

    def finish_file(self) -> None: ...


class RichLoadProgress:
    """One transient bar over all files; used as a context manager."""

    def __init__(self, console: Console, total_bytes: int) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress: Progress = Progress(
            TextColumn("[bold]loading[/bold] {task.fields[label]}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task: TaskID = self._progress.add_task("load", total=total_bytes, label="")
        self._base = 0
        self._size = 0

    def __enter__(self) -> RichLoadProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def start_file(self, label: str, size: int) -> None:
        from agent_telemetry._text import markup

        self._size = size
        # The column reads markup, and the label is a file name.
        self._progress.update(self._task, label=markup(label), completed=self._base)

    def update(self, done: int) -> None:
        self._progress.update(self._task, completed=self._base + min(done, self._size))

    def finish_file(self) -> None:
        self._base += self._size
        self._progress.update(self._task, completed=self._base)


def wants_bar(console: Console, total_bytes: int) -> bool:
    return console.is_terminal and total_bytes >= LONG_LOAD_BYTES
