"""``agent-telemetry views plan | approve | apply | create-sink``: the BigQuery deployment.

google-cloud-bigquery (the ``[bigquery]`` extra) is imported inside the commands. As
every command: exit 1 when the plan found something to act on (``--exit-code``: changes
pending or drift; failed dry runs), 2 on an error (usage, credentials, the server).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from agent_telemetry.deploy._types import DEFAULT_VALID_DAYS, MAX_VALID_DAYS
from agent_telemetry.views.cli_options import config_option

if TYPE_CHECKING:
    from agent_telemetry.config import DeploymentConfig, Layout
    from agent_telemetry.deploy._client import BigQueryWarehouse
    from agent_telemetry.deploy._plan import DeploymentPlan
    from agent_telemetry.deploy._plan_document import CapacityChange
    from agent_telemetry.project import Project
    from agent_telemetry.schema import EventSpec
    from agent_telemetry.views import ViewDefinition

DEFAULT_APPROVAL = Path("telemetry-approval.json")


def _fail(exc: Exception) -> NoReturn:
    raise click.ClickException(str(exc)) from None


def _require_bigquery() -> None:
    """Every deploy module below the commands needs google-cloud-bigquery (the
    ``[bigquery]`` extra): without it, one line says so, before any of them loads."""
    from agent_telemetry.deploy._types import BigQueryError

    try:
        importlib.import_module("agent_telemetry.deploy._client")
    except BigQueryError as exc:
        _fail(exc)


def _load(config_path: Path | None) -> Project:
    """The deployment file and its catalogue, resolved once for the whole command."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import resolve_project

    try:
        return resolve_project(config_path)
    except ConfigError as exc:
        _fail(exc)


def planned_views(project: Project, layout: Layout | None) -> tuple[ViewDefinition, ...]:
    """The views a plan deploys: generated from the project's catalogue, for ``layout``
    (default: the config's)."""
    from agent_telemetry.views import generate_views

    return generate_views(project.config, layout, _version_specs(project))


def _version_specs(project: Project) -> tuple[EventSpec, ...]:
    """Every version of every event of the project's catalogue (importing it may fail:
    one line says why)."""
    from agent_telemetry.errors import AgentTelemetryError

    try:
        return project.catalogue.version_specs()
    except AgentTelemetryError as exc:
        _fail(exc)


def _connect(config: DeploymentConfig, endpoint: str | None) -> BigQueryWarehouse:
    from agent_telemetry.deploy._types import BigQueryError

    try:
        from agent_telemetry.deploy._client import BigQueryWarehouse

        return BigQueryWarehouse.connect(project=config.target.project, endpoint=endpoint)
    except BigQueryError as exc:
        _fail(exc)


def _layout(layout: str | None) -> Layout | None:
    return layout  # type: ignore[return-value]  # click.Choice admits only layouts


def _plan(config_path: Path | None, layout: str | None, endpoint: str | None) -> DeploymentPlan:
    from agent_telemetry.deploy._read import make_plan
    from agent_telemetry.deploy._types import BigQueryError

    project = _load(config_path)
    views = planned_views(project, _layout(layout))
    warehouse = _connect(project.config, endpoint)
    try:
        return make_plan(
            warehouse, project.config, views, layout=_layout(layout), specs=_version_specs(project)
        )
    except BigQueryError as exc:
        _fail(exc)


def _capacity(plan: DeploymentPlan, config_path: Path | None) -> list[CapacityChange]:
    """Capacity per event view: the catalogue's version against the locked one."""
    from agent_telemetry.deploy._capacity import capacity_changes
    from agent_telemetry.project import resolve_project
    from agent_telemetry.schema.lock import LockFormatError, read_lock

    project = resolve_project(config_path)
    try:
        lock = read_lock(project.lock_path)
    except (LockFormatError, OSError):
        lock = None  # `check` reports a broken lock; the page then shows generated figures
    return capacity_changes(plan, project.catalogue.version_specs(), lock)


_layout_option = click.option(
    "--layout",
    type=click.Choice(["partitioned", "sharded", "analytics"]),
    default=None,
    help="Source layout (default: the config's).",
)
_endpoint_option = click.option(
    "--endpoint",
    metavar="URL",
    default=None,
    help=(
        "BigQuery API server to use with anonymous credentials (also "
        "$AGENT_TELEMETRY_BQ_ENDPOINT); default: Google's, with your default credentials."
    ),
)


@click.command("plan")
@config_option
@_layout_option
@_endpoint_option
@click.option(
    "--exit-code",
    is_flag=True,
    help="Exit 0 when there is nothing to do, 1 when changes are pending (or drifted), 2 on error.",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown: a pull-request comment; json: for bots (docs/plan.schema.json).",
)
@click.option(
    "--color",
    "colour",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text diff: auto colours a terminal only, never a pipe or a CI log.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the owner's review page: one self-contained, offline HTML file.",
)
def plan_command(
    config_path: Path | None,
    layout: str | None,
    endpoint: str | None,
    exit_code: bool,
    output: str,
    colour: str,
    html_path: Path | None,
) -> None:
    """Compare the deployed views with the generated ones; dry-run every view."""
    _require_bigquery()
    from agent_telemetry.deploy._plan_document import approve_command, plan_document
    from agent_telemetry.deploy._plan_markdown import render_markdown
    from agent_telemetry.deploy._report import render_plan

    plan = _plan(config_path, layout, endpoint)
    document = plan_document(
        plan, approve_command(config_path, layout, endpoint), _capacity(plan, config_path)
    )
    if html_path is not None:
        from agent_telemetry.deploy._review_page import write_review_page

        try:
            write_review_page(document, html_path)
        except OSError as exc:
            _fail(OSError(f"cannot write the review page {html_path}: {exc.strerror}"))
    if output == "json":
        click.echo(document.model_dump_json(indent=2))
    elif output == "markdown":
        click.echo(render_markdown(document), nl=False)
    else:
        force = {"auto": None, "always": True, "never": False}[colour]
        click.echo(render_plan(plan, colour=force is not False), nl=False, color=force)
    if plan.dry_run_failures:
        sys.exit(1)
    if exit_code:
        sys.exit(plan.exit_code())


@click.command("approve")
@config_option
@_layout_option
@_endpoint_option
@click.option(
    "--by",
    "approver",
    default=None,
    metavar="NAME",
    help="Who approves the plan (default: your git identity, user.name <user.email>).",
)
@click.option(
    "--valid-days",
    type=click.IntRange(1, MAX_VALID_DAYS),
    default=DEFAULT_VALID_DAYS,
    show_default=True,
    help="Days the record stays valid: apply refuses an older one.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_APPROVAL,
    show_default=True,
    help="Where to write the approval record.",
)
def approve_command(
    config_path: Path | None,
    layout: str | None,
    endpoint: str | None,
    approver: str | None,
    valid_days: int,
    output: Path,
) -> None:
    """Plan, then write an approval record bound to the plan's hash (review and commit it)."""
    _require_bigquery()
    from agent_telemetry.deploy._approval import (
        ApprovalError,
        approve,
        check_approver,
        write_approval,
    )
    from agent_telemetry.deploy._identity import approver_identity, git_user
    from agent_telemetry.deploy._report import render_approval, render_plan

    source = "--by"
    if approver is None:
        approver, source = git_user(), "the git identity (defaults --by)"
        if approver is None:
            _fail(
                ApprovalError(
                    "--by: no name given and no git identity (git config user.name / "
                    "user.email) to default to"
                )
            )
    try:
        approver = check_approver(approver, source)
    except ApprovalError as exc:
        _fail(exc)
    plan = _plan(config_path, layout, endpoint)
    click.echo(render_plan(plan), nl=False)
    try:
        record = approve(plan, approver, identity=approver_identity(), valid_days=valid_days)
        write_approval(record, output)
    except ApprovalError as exc:
        _fail(exc)
    click.echo(render_approval(record, str(output)), nl=False)
    if plan.dry_run_failures:
        click.echo(
            "note: dry runs fail; apply refuses until they pass "
            "(--patch-sink adds missing sink fields first)",
            err=True,
        )


@click.command("apply")
@config_option
@_layout_option
@_endpoint_option
@click.option(
    "--approval",
    "approval_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The approval record written by `views approve`.",
)
@click.option(
    "--adopt",
    is_flag=True,
    help="Overwrite views that changed outside agent-telemetry or that it did not create.",
)
@click.option(
    "--patch-sink",
    is_flag=True,
    help="First add the approved missing payload fields (NULLABLE) to the sink table.",
)
def apply_command(
    config_path: Path | None,
    layout: str | None,
    endpoint: str | None,
    approval_path: Path,
    adopt: bool,
    patch_sink: bool,
) -> None:
    """Recompute the plan and, if the approval covers it, create or update the views."""
    _require_bigquery()
    from agent_telemetry.deploy._apply import apply_plan
    from agent_telemetry.deploy._approval import ApprovalError, read_approval
    from agent_telemetry.deploy._report import render_apply
    from agent_telemetry.deploy._types import BigQueryError

    project = _load(config_path)
    try:
        approval = read_approval(approval_path)
    except ApprovalError as exc:
        _fail(exc)
    views = planned_views(project, _layout(layout))
    warehouse = _connect(project.config, endpoint)
    try:
        result = apply_plan(
            warehouse,
            project.config,
            approval,
            views=views,
            layout=_layout(layout),
            specs=_version_specs(project),
            adopt=adopt,
            patch_sink=patch_sink,
        )
    except BigQueryError as exc:
        _fail(exc)
    click.echo(render_apply(result), nl=False)
    if not result.ok:
        sys.exit(1)


@click.command("create-sink")
@config_option
@_layout_option
@_endpoint_option
def create_sink_command(config_path: Path | None, layout: str | None, endpoint: str | None) -> None:
    """Create the source and target datasets and the sink table where they do not exist.

    The table gets the catalogue's sink schema (as `agent-telemetry sink-schema` prints
    it), partitioned by day on timestamp (sharded: today's shard). Nothing that exists is
    changed. For a local BigQuery API server (--endpoint), or to pre-create a sink
    before the log sink first writes.
    """
    _require_bigquery()
    from agent_telemetry.deploy._sink_create import create_sink
    from agent_telemetry.deploy._types import BigQueryError

    project = _load(config_path)
    specs = _version_specs(project)
    warehouse = _connect(project.config, endpoint)
    try:
        for line in create_sink(warehouse, project.config, _layout(layout), specs):
            click.echo(line)
    except (BigQueryError, ValueError) as exc:
        _fail(exc)
