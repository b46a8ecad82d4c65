"""Plain data the BigQuery adapter returns: no client objects, no google.cloud import.

Schema fields are ``TableField`` (``agent_telemetry.views``), the shape the sink schema
and the views' columns already have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.views import TableField

# How long an approval record stays valid (days): the default, and the most allowed.
DEFAULT_VALID_DAYS = 14
MAX_VALID_DAYS = 90


class BigQueryError(AgentTelemetryError):
    """A BigQuery call failed, or the client cannot be created; says which and why."""


@dataclass(frozen=True, slots=True)
class TableState:
    """What ``tables.get`` says about a table or view."""

    table_id: str
    kind: str
    labels: dict[str, str] = field(hash=False)
    description: str | None
    schema: tuple[TableField, ...]
    view_query: str | None
    modified_ms: int | None
    # BigQuery's version tag: a patch sent with it fails (412) if the table changed since.
    etag: str | None = None


@dataclass(frozen=True, slots=True)
class DryRun:
    """A dry run's verdict: the output schema, or the server's error (first line)."""

    schema: tuple[TableField, ...]
    error: str | None = None
    bytes_processed: int | None = None  # what a query of the whole view would scan
    one_day_bytes: int | None = None  # what a query of one day of it would scan

    @property
    def ok(self) -> bool:
        return self.error is None

    def with_one_day(self, day: Callable[[], DryRun]) -> DryRun:
        """This dry run of the whole view, with ``day()``'s bytes (the dry run of its
        query of one day) beside them: None if that one fails. Not asked when the whole
        view scans 0 bytes: a day of it is the same query filtered, which scans no more
        (an empty sink, a first deployment), so the answer is 0 without a second call."""
        if not self.ok:
            return self
        if self.bytes_processed == 0:
            return replace(self, one_day_bytes=0)
        answer = day()
        return replace(self, one_day_bytes=answer.bytes_processed if answer.ok else None)
