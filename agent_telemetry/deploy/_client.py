"""The only module that talks to BigQuery: a thin adapter over google-cloud-bigquery.

Everything it returns is plain data (``_types``, ``TableField``), so the planning and approval
logic never sees a client object and never imports google.cloud.
google-cloud-bigquery is the optional extra ``[bigquery]``; importing this module without
it raises ``BigQueryError`` saying how to install it.

Every call carries a bounded retry: the client's default retries a 5xx for ten minutes,
which turns one server bug into a hung terminal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from agent_telemetry.deploy._types import BigQueryError, DryRun, TableState
from agent_telemetry.views import TableField

ENDPOINT_ENV = "AGENT_TELEMETRY_BQ_ENDPOINT"
DEADLINE_ENV = "AGENT_TELEMETRY_BQ_DEADLINE"
DEFAULT_RETRY_DEADLINE_S = 120.0
_MESSAGE_LIMIT = 400


try:
    from google.api_core import exceptions as api_exceptions
    from google.api_core.client_options import ClientOptions
    from google.auth import exceptions as auth_exceptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery
    from google.cloud.bigquery.retry import DEFAULT_JOB_RETRY, DEFAULT_RETRY
except ImportError as exc:  # tested in a subprocess that hides google.cloud.bigquery
    raise BigQueryError(
        "google-cloud-bigquery is not installed; install the extra: "
        "pip install 'agent-telemetry[bigquery]'"
    ) from exc


def _short(exc: BaseException) -> str:
    """The server's own message (first line), without the request line the client adds."""
    errors = getattr(exc, "errors", None)
    message: object = None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        message = errors[0].get("message")
    if not message:
        message = getattr(exc, "message", None) or str(exc)
    lines = str(message).strip().splitlines()
    first = lines[0] if lines else type(exc).__name__
    return first if len(first) <= _MESSAGE_LIMIT else first[: _MESSAGE_LIMIT - 1] + "…"


def check_endpoint(endpoint: str) -> str:
    """An endpoint must be a bare http(s)://host[:port] URL (no credentials, path or query)."""
    parts = urlsplit(endpoint)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise BigQueryError("endpoint must be an http(s)://host[:port] URL")
    try:
        _ = parts.port
    except ValueError:
        raise BigQueryError("endpoint port is not a number") from None
    return endpoint.rstrip("/")


def retry_deadline_from_env() -> float:
    """``$AGENT_TELEMETRY_BQ_DEADLINE`` seconds (default 120): how long one call may retry."""
    raw = os.environ.get(DEADLINE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_RETRY_DEADLINE_S
    try:
        value = float(raw)
    except ValueError:
        raise BigQueryError(f"${DEADLINE_ENV} must be a number of seconds") from None
    if not 0 < value <= 3600:
        raise BigQueryError(f"${DEADLINE_ENV} must be between 0 and 3600 seconds")
    return value


def _api_errors() -> tuple[type[BaseException], ...]:
    return (
        api_exceptions.GoogleAPIError,
        api_exceptions.RetryError,
        auth_exceptions.GoogleAuthError,
    )


class BigQueryWarehouse:
    """The calls the deployment makes, each with a bounded retry and a plain-data result."""

    def __init__(
        self,
        client: bigquery.Client,
        *,
        endpoint: str | None = None,
        retry_deadline_s: float = DEFAULT_RETRY_DEADLINE_S,
    ) -> None:
        self._client = client
        self.endpoint = endpoint
        self._retry = DEFAULT_RETRY.with_deadline(retry_deadline_s)
        self._job_retry = DEFAULT_JOB_RETRY.with_deadline(retry_deadline_s)
        self._timeout = retry_deadline_s

    @classmethod
    def connect(
        cls,
        *,
        project: str,
        endpoint: str | None = None,
        retry_deadline_s: float | None = None,
    ) -> BigQueryWarehouse:
        """A client for ``endpoint`` (or ``$AGENT_TELEMETRY_BQ_ENDPOINT``) with anonymous
        credentials; without one, the user's default Google credentials and project.

        ``project`` (the target's) runs the jobs when the endpoint is set, or when the
        default credentials name no project.
        """
        endpoint = endpoint or os.environ.get(ENDPOINT_ENV) or None
        if retry_deadline_s is None:
            retry_deadline_s = retry_deadline_from_env()
        if endpoint is not None:
            endpoint = check_endpoint(endpoint)
            client = bigquery.Client(
                project=project,
                client_options=ClientOptions(api_endpoint=endpoint),
                credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            )
            return cls(client, endpoint=endpoint, retry_deadline_s=retry_deadline_s)
        try:
            try:
                client = bigquery.Client()
            except OSError:
                # Credentials found but no default project: bill the target's project.
                client = bigquery.Client(project=project)
        except auth_exceptions.DefaultCredentialsError:
            raise BigQueryError(
                "no Google credentials found: run `gcloud auth application-default login`, "
                f"or point --endpoint / ${ENDPOINT_ENV} at a BigQuery API server"
            ) from None
        return cls(client, retry_deadline_s=retry_deadline_s)

    @property
    def project(self) -> str:
        return str(self._client.project)

    def dataset_exists(self, project: str, dataset: str) -> bool:
        try:
            self._client.get_dataset(f"{project}.{dataset}", retry=self._retry)
        except api_exceptions.NotFound:
            return False
        except _api_errors() as exc:
            raise BigQueryError(f"get dataset {project}.{dataset}: {_short(exc)}") from None
        return True

    def get_table(self, table_id: str) -> TableState | None:
        """The table or view, or None when it does not exist."""
        try:
            table = self._client.get_table(table_id, retry=self._retry, timeout=self._timeout)
        except api_exceptions.NotFound:
            return None
        except _api_errors() as exc:
            raise BigQueryError(f"get table {table_id}: {_short(exc)}") from None
        resource = table.to_api_repr()
        modified = resource.get("lastModifiedTime")
        return TableState(
            table_id=table_id,
            kind=str(resource.get("type") or "TABLE"),
            labels={str(k): str(v) for k, v in (resource.get("labels") or {}).items()},
            description=resource.get("description") or None,
            schema=tuple(
                TableField.from_api(f) for f in (resource.get("schema") or {}).get("fields", ())
            ),
            view_query=(resource.get("view") or {}).get("query") or None,
            modified_ms=int(modified) if modified is not None else None,
            etag=resource.get("etag") or None,
        )

    def list_table_ids(self, project: str, dataset: str) -> list[str]:
        """Names of the tables in a dataset (for finding the newest date shard)."""
        try:
            items = self._client.list_tables(
                f"{project}.{dataset}", retry=self._retry, timeout=self._timeout
            )
            return [str(item.table_id) for item in items]
        except api_exceptions.NotFound:
            return []
        except _api_errors() as exc:
            raise BigQueryError(f"list tables of {project}.{dataset}: {_short(exc)}") from None

    def dry_run(self, sql: str) -> DryRun:
        """Validate ``sql`` against the real tables without running it."""
        config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False)
        try:
            job = self._client.query(
                sql,
                job_config=config,
                retry=self._retry,
                job_retry=self._job_retry,
                timeout=self._timeout,
            )
        except _api_errors() as exc:
            return DryRun(schema=(), error=_short(exc))
        schema = tuple(TableField.from_api(f.to_api_repr()) for f in job.schema or ())
        processed = job.total_bytes_processed
        return DryRun(schema=schema, bytes_processed=None if processed is None else int(processed))

    def create_dataset(self, project: str, dataset: str) -> bool:
        """Create the dataset unless it exists; True when this call created it."""
        try:
            self._client.create_dataset(
                f"{project}.{dataset}", retry=self._retry, timeout=self._timeout
            )
        except api_exceptions.Conflict:
            return False
        except _api_errors() as exc:
            raise BigQueryError(f"create dataset {project}.{dataset}: {_short(exc)}") from None
        return True

    def create_table(
        self, table_id: str, schema: Sequence[TableField], *, day_partition: str | None
    ) -> bool:
        """Create the table unless it exists (an existing one is left as it is), partitioned
        by day on ``day_partition`` when given; True when this call created it."""
        table = bigquery.Table(
            table_id, schema=[bigquery.SchemaField.from_api_repr(f.to_api()) for f in schema]
        )
        if day_partition is not None:
            table.time_partitioning = bigquery.TimePartitioning(field=day_partition)
        try:
            self._client.create_table(table, retry=self._retry, timeout=self._timeout)
        except api_exceptions.Conflict:
            return False
        except _api_errors() as exc:
            raise BigQueryError(f"create table {table_id}: {_short(exc)}") from None
        return True

    def create_view(
        self, table_id: str, *, query: str, description: str, labels: Mapping[str, str]
    ) -> None:
        table = bigquery.Table(table_id)
        table.view_query = query
        table.description = description
        table.labels = dict(labels)
        try:
            self._client.create_table(table, retry=self._retry, timeout=self._timeout)
        except _api_errors() as exc:
            raise BigQueryError(f"create view {table_id}: {_short(exc)}") from None

    def set_view_query(
        self, table_id: str, *, query: str, labels: Mapping[str, str], etag: str | None
    ) -> None:
        """Replace a view's SQL and set labels in one patch (both or neither change), only
        if the view is still at ``etag`` (the version the caller read)."""
        table = _versioned_table(table_id, etag)
        table.view_query = query
        table.labels = dict(labels)
        try:
            self._client.update_table(
                table, ["view_query", "labels"], retry=self._retry, timeout=self._timeout
            )
        except api_exceptions.PreconditionFailed:
            raise BigQueryError(f"update view {table_id}: {_CHANGED}") from None
        except _api_errors() as exc:
            raise BigQueryError(f"update view {table_id}: {_short(exc)}") from None

    def set_metadata(
        self,
        table_id: str,
        *,
        description: str,
        schema: Sequence[TableField],
        labels: Mapping[str, str],
        etag: str | None,
    ) -> None:
        """Set description, schema (column descriptions) and labels in one patch, only if
        the view is still at ``etag``."""
        table = _versioned_table(table_id, etag)
        table.description = description
        table.schema = [bigquery.SchemaField.from_api_repr(f.to_api()) for f in schema]
        table.labels = dict(labels)
        try:
            self._client.update_table(
                table,
                ["description", "schema", "labels"],
                retry=self._retry,
                timeout=self._timeout,
            )
        except api_exceptions.PreconditionFailed:
            raise BigQueryError(f"update metadata of {table_id}: {_CHANGED}") from None
        except _api_errors() as exc:
            raise BigQueryError(f"update metadata of {table_id}: {_short(exc)}") from None

    def set_schema(
        self, table_id: str, *, base: Sequence[TableField], schema: Sequence[TableField]
    ) -> None:
        """Patch a table's schema from ``base`` to ``schema``, only if it is still ``base``.

        The patch carries the etag of the table it was checked against, so a column the
        log sink adds meanwhile makes the call fail instead of being silently dropped.
        """
        try:
            table = self._client.get_table(table_id, retry=self._retry, timeout=self._timeout)
            current = tuple(TableField.from_api(f.to_api_repr()) for f in table.schema)
            if current != tuple(base):
                raise BigQueryError(f"patch schema of {table_id}: it changed since the plan")
            table.schema = [bigquery.SchemaField.from_api_repr(f.to_api()) for f in schema]
            self._client.update_table(table, ["schema"], retry=self._retry, timeout=self._timeout)
        except _api_errors() as exc:
            raise BigQueryError(f"patch schema of {table_id}: {_short(exc)}") from None


_CHANGED = "it changed since it was read (etag); not overwritten, run views plan again"


def _versioned_table(table_id: str, etag: str | None) -> bigquery.Table:
    """A patch body for ``table_id`` carrying ``etag``: the client then sends If-Match,
    and BigQuery refuses the patch (412) if the table changed since that version."""
    project, dataset, table = table_id.split(".")
    resource: dict[str, object] = {
        "tableReference": {"projectId": project, "datasetId": dataset, "tableId": table}
    }
    if etag is not None:
        resource["etag"] = etag
    return bigquery.Table.from_api_repr(resource)
