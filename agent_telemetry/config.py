"""The deployment file (``telemetry.toml``): where the sink lands and where the views go.

Every name in it ends up inside SQL, so each one is checked against the BigQuery
identifier grammar here, before any SQL exists. A value that fails is reported by
the key that holds it, never by echoing it: the file may come from anyone's branch.
"""

from __future__ import annotations

import re
import tomllib  # its error class only: _parse reads the file
from collections.abc import Mapping, Set
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from agent_telemetry._parse import toml_document
from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.schema.catalogue import MODULE_PATH
from agent_telemetry.schema.compat import CompatException, ExceptionEntryError

Layout = Literal["partitioned", "sharded", "analytics"]
LAYOUTS: tuple[Layout, ...] = ("partitioned", "sharded", "analytics")

DEFAULT_SINK_TABLE = "run_googleapis_com_stdout"
ANALYTICS_VIEW = "_AllLogs"
DEFAULT_LOG_ID = "run.googleapis.com/stdout"

# Google Cloud project ids: 6-30 characters, lowercase letters, digits and hyphens,
# starting with a letter, not ending with a hyphen; legacy "domain.com:project" form.
_PROJECT = re.compile(r"(?:[a-z0-9](?:[a-z0-9.-]{0,61}[a-z0-9])?:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")
# Dataset and table names we accept: the ASCII subset BigQuery allows everywhere.
_NAME = re.compile(r"[A-Za-z0-9_]{1,1024}")
# Cloud Logging log ids: letters, digits, "/", "_", "-", "." (fewer than 512 characters).
_LOG_ID = re.compile(r"[A-Za-z0-9/_.-]{1,511}")

_IDENTIFIER_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "project": (
        _PROJECT,
        "a Google Cloud project id: 6-30 lowercase letters, digits or hyphens, "
        "starting with a letter (optionally 'domain:' first)",
    ),
    "name": (_NAME, "a BigQuery name: letters, digits and underscores, at most 1024"),
    "log_id": (_LOG_ID, "a Cloud Logging log id: letters, digits, '/', '_', '-', '.'"),
    "module": (MODULE_PATH, "a dotted Python import path (myservice.telemetry)"),
}


def identifier_problem(kind: str, value: str) -> str | None:
    """Why ``value`` cannot be a ``kind`` ("project", "name", "log_id", "module") of this
    file, as ``"not <the rule>"`` (never the value), or None when it can."""
    pattern, rule = _IDENTIFIER_RULES[kind]
    return None if pattern.fullmatch(value) else f"not {rule}"


class ConfigError(AgentTelemetryError, ValueError):
    """The deployment file is unreadable or a key holds something that is not allowed."""


class _IdentifierError(ValueError):
    """Raised inside validation; carries only the rule text, never the value."""


def _checked(kind: str) -> AfterValidator:
    pattern, rule = _IDENTIFIER_RULES[kind]

    def check(value: str) -> str:
        if pattern.fullmatch(value) is None:
            raise _IdentifierError(f"not {rule}")
        return value

    return AfterValidator(check)


ProjectId = Annotated[str, _checked("project")]
BigQueryName = Annotated[str, _checked("name")]
LogId = Annotated[str, _checked("log_id")]
ModulePath = Annotated[str, _checked("module")]


def _relative(value: str) -> str:
    # A path in the repository, written the same on every OS: never absolute, never
    # climbing out of the folder of telemetry.toml, no control characters.
    posix, windows = PurePosixPath(value), PureWindowsPath(value)
    if (
        not value
        or len(value) > 1024
        or posix.is_absolute()
        or windows.is_absolute()
        or windows.drive
        or "\\" in value
        or ".." in posix.parts
        or any(ord(c) < 32 or c == "\x7f" for c in value)
    ):
        raise _IdentifierError(
            "not a relative path inside the folder of telemetry.toml ('/'-separated, no '..')"
        )
    return value


RelativePath = Annotated[str, AfterValidator(_relative)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SourceConfig(_Strict):
    """Where the log sink lands."""

    project: ProjectId
    dataset: BigQueryName
    layout: Layout = "partitioned"
    table: BigQueryName | None = None
    log_id: LogId = DEFAULT_LOG_ID
    # Exports are not de-duplicated: the views keep one row per LogEntry (insertId with
    # timestamp) unless a sink is known to be clean (docs/analyst-guide.md).
    dedupe: bool = True

    def table_for(self, layout: Layout) -> str:
        """The table (or view) to read for ``layout``; sharded tables get the ``_*`` wildcard.

        ``table`` names the sink table of the configured layout; the other layouts, rendered
        for review, read their usual names.
        """
        if layout == "analytics":
            if self.layout == "analytics" and self.table is not None:
                return self.table
            return ANALYTICS_VIEW
        table = self.table if self.table is not None and self.layout != "analytics" else None
        table = table or DEFAULT_SINK_TABLE
        return f"{table}_*" if layout == "sharded" else table


class TargetConfig(_Strict):
    """Where the views are created."""

    project: ProjectId
    dataset: BigQueryName


class CatalogueSetting(_Strict):
    """``[catalogue]``: the service's own event catalogue and its schema lock.

    ``module`` exposes ``EVENTS`` (and optionally ``EVENT_VERSIONS``); ``lock`` is
    relative to the folder of telemetry.toml. Without the table, the package's own
    catalogue and lock are used.
    """

    module: ModulePath
    lock: RelativePath


class ViewsSetting(_Strict):
    """``[views]``: where ``views build`` writes and which layouts it renders.

    ``dir`` and ``docs`` are relative to the folder of telemetry.toml (defaults: the
    ``views`` folder beside the catalogue's lock, or the package's generated/ folder
    without a catalogue; ``docs/telemetry.md``). ``layouts`` defaults to the source's
    own layout only.
    """

    dir: RelativePath | None = None
    docs: RelativePath | None = None
    # TOML arrays arrive as lists; a tuple keeps the config frozen.
    layouts: tuple[Layout, ...] | None = Field(default=None, strict=False, min_length=1)


# k = 1 would call nothing rare; the top keeps k a count a day can reach.
K_ANONYMITY_LEAST: Final = 2
K_ANONYMITY_MOST: Final = 1_000_000


class CheckLogsSetting(_Strict):
    """``[check_logs]``: how ``check-logs`` measures the data.

    ``k_anonymity``: a combination of closed-set values that fewer than k valid lines
    of a UTC day share is rare (counted, never shown); ``--k-anonymity`` overrides it.
    """

    k_anonymity: int = Field(default=5, ge=K_ANONYMITY_LEAST, le=K_ANONYMITY_MOST)


class DeploymentConfig(_Strict):
    """One deployment: the sink to read and the dataset the views go to.

    Unknown keys are errors. ``[[exceptions]]`` lists the reviewed breaking schema
    changes (rule, event, field, reason) that ``agent-telemetry check`` lets pass.
    """

    source: SourceConfig
    target: TargetConfig
    # TOML arrays arrive as lists; the field is a tuple so the config stays frozen.
    exceptions: tuple[CompatException, ...] = Field(default=(), strict=False)
    catalogue: CatalogueSetting | None = None
    views: ViewsSetting = ViewsSetting()
    check_logs: CheckLogsSetting = CheckLogsSetting()

    @property
    def layouts(self) -> tuple[Layout, ...]:
        """The layouts ``views build`` renders: ``[views] layouts``, in LAYOUTS order, or
        the source's own."""
        chosen = self.views.layouts or (self.source.layout,)
        return tuple(layout for layout in LAYOUTS if layout in chosen)


def _where(loc: tuple[int | str, ...]) -> str:
    """``exceptions[0].reason``: keys joined by dots, list indexes in brackets."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = part if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", part) else "<unprintable key>"
        out += f".{text}" if out else text
    return out or "(top level)"


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "value_error":
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, _IdentifierError | ExceptionEntryError):
            return str(cause)
    if kind == "literal_error":
        return f"must be one of {', '.join(LAYOUTS)}"
    if kind in {"tuple_type", "list_type", "too_short"}:
        return "wrong type (a non-empty list expected)"
    if kind == "bool_type":
        return "wrong type (true or false expected)"
    if kind in {"string_type", "model_type", "dict_type"}:
        return "wrong type (" + ("a string" if kind == "string_type" else "a table") + " expected)"
    return "invalid value"


def parse_config(data: dict[str, Any], origin: str = "config") -> DeploymentConfig:
    """Validate an already-parsed TOML document."""
    try:
        config = DeploymentConfig.model_validate(data)
    except ValidationError as exc:
        problems = [f"{origin}: {_where(e['loc'])}: {_message(e)}" for e in exc.errors()]
        raise ConfigError("\n".join(problems)) from None
    if config.views.layouts is not None and config.source.layout not in config.views.layouts:
        # The data dictionary documents the source's own layout: it is always built.
        raise ConfigError(f"{origin}: views.layouts: must include source.layout")
    return config


# Event name -> every field name it has had (any registered version, any lock).
KnownEvents = Mapping[str, Set[str]]


def check_exceptions(
    config: DeploymentConfig, known: KnownEvents, origin: str = "config"
) -> DeploymentConfig:
    """Hold every ``[[exceptions]]`` entry to the events and fields that exist.

    ``known``: the events of the current models, of every registered version and of the
    locks at hand, so a deleted event (or field) can still be excepted. An entry naming
    anything else is an error naming the entry and key (``exceptions[0].event: not a
    known event``), never the value: the file may come from anyone's branch, and later
    messages (an unused exception, an excepted change) repeat the names.
    """
    problems = []
    for index, entry in enumerate(config.exceptions):
        fields = known.get(entry.event)
        if fields is None:
            problems.append(
                f"{origin}: exceptions[{index}].event: not a known event "
                "(none of the models, registered versions or the lock has it)"
            )
        elif entry.field is not None and entry.field not in fields:
            problems.append(
                f"{origin}: exceptions[{index}].field: not a field of that event "
                "(in any of its versions or the lock)"
            )
    if problems:
        raise ConfigError("\n".join(problems))
    return config


def load_config(path: str | Path, known: KnownEvents | None = None) -> DeploymentConfig:
    """Read and validate a deployment file; raises ConfigError naming the key at fault.

    With ``known`` (see ``check_exceptions``) the ``[[exceptions]]`` entries must name
    known events and fields; ``agent-telemetry check`` and ``lock`` pass it.
    """
    path = Path(path)
    try:
        data = toml_document(path.read_text(encoding="utf-8"), str(path), ConfigError)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({type(exc).__name__})") from None
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message gives line and column, not the offending text.
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    config = parse_config(data, origin=str(path))
    return config if known is None else check_exceptions(config, known, str(path))
