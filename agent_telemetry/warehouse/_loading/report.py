"""What a load reports: each file's counts, and the load's sums of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_telemetry.warehouse._reading.inputs import Repeat
from agent_telemetry.warehouse._reading.records import Kind
from agent_telemetry.warehouse._reading.source import Layout


@dataclass(slots=True)
class FileLoad:
    """What one file held. ``records`` counts non-blank lines (or array elements);
    ``records`` = ``loaded`` + ``text`` + ``other_json`` + ``truncated`` + ``oversized``
    + ``too_deep`` + ``undecodable``."""

    path: str
    layout: Layout
    encoding: str = "utf-8"  # as read: utf-8, utf-8 (BOM), utf-16-le (BOM), ...
    records: int = 0
    loaded: int = 0  # telemetry records, stored (duplicates too: the views keep one)
    text: int = 0  # not JSON: the service's own plain log lines
    truncated: int = 0  # began like JSON but did not parse
    other_json: int = 0  # JSON that is not a telemetry record
    oversized: int = 0  # longer than MAX_RECORD bytes
    too_deep: int = 0  # nested deeper than MAX_DEPTH
    undecodable: int = 0  # invalid UTF-8, or a lone surrogate escape
    duplicates: int = 0  # telemetry LogEntries seen before (insertId and timestamp)
    cut_at: int | None = None  # a gzip stream broke off (cut or corrupt) at this record
    stopped: str | None = None  # why the read stopped at a limit (a gzip bomb?)

    @property
    def skipped(self) -> int:
        return self.records - self.loaded

    @property
    def unreadable(self) -> bool:
        """The gzip stream broke off at its first record: nothing of the file was read."""
        return self.cut_at is not None and self.records == 1

    def count(self, kind: Kind, count: int) -> None:
        """Count ``count`` records of a kind that is not telemetry (TEXT comes in runs)."""
        if kind is Kind.TEXT:
            self.text += count
        elif kind is Kind.MALFORMED:
            self.truncated += count
        elif kind is Kind.OTHER_JSON:
            self.other_json += count
        elif kind is Kind.OVERSIZED:
            self.oversized += count
        elif kind is Kind.TOO_DEEP:
            self.too_deep += count
        else:
            self.undecodable += count


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Every file's counts; ``skipped`` = ``non_telemetry`` + ``truncated`` + ``hostile``."""

    table: str
    files: tuple[FileLoad, ...] = field(default=())
    repeated: tuple[Repeat, ...] = field(default=())  # inputs naming a file already read
    # Stored copies of an entry (same insertId and timestamp) whose payload differs from
    # the copy the views keep.
    conflicting: int = 0

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)

    @property
    def loaded(self) -> int:
        return sum(f.loaded for f in self.files)

    @property
    def skipped(self) -> int:
        return self.records - self.loaded

    @property
    def non_telemetry(self) -> int:
        return sum(f.text + f.other_json for f in self.files)

    @property
    def truncated(self) -> int:
        return sum(f.truncated for f in self.files)

    @property
    def hostile(self) -> int:
        """Records too long, too deep or not valid Unicode: counted, never read."""
        return sum(f.oversized + f.too_deep + f.undecodable for f in self.files)

    @property
    def stopped(self) -> tuple[FileLoad, ...]:
        return tuple(f for f in self.files if f.stopped is not None)

    @property
    def duplicates(self) -> int:
        return sum(f.duplicates for f in self.files)

    @property
    def unreadable(self) -> tuple[FileLoad, ...]:
        return tuple(f for f in self.files if f.unreadable)

    @property
    def damaged(self) -> bool:
        """Whether a record could not be read (truncated, a gzip stream's break among them,
        or hostile), a file stopped at a limit or was named twice, or copies of an entry
        disagree: what a reader of the load's results must be told. Plain text beside the
        telemetry and duplicate deliveries are a log's ordinary content."""
        return bool(
            self.truncated or self.hostile or self.stopped or self.repeated or self.conflicting
        )
