"""Edges of the plan and the approval record that mutation testing found untested (no
server needed).

The plan: the hash formats that outlive one run (the ``meta-sha256`` label on every
deployed view, the plan hash and per-view digests in a committed approval record), the
deployed-view fingerprint (changes with anything apply cares about, stays otherwise),
every verdict and reason of ``judge_view``, the exact diff text, and what ``view_plan``
records. The approval record: every refusal message names its file and field, reading
and writing errors, a record written and read under an ASCII locale, the approval time
in UTC whatever the machine's time zone, and ``approval_problems`` naming every reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import agent_telemetry
from agent_telemetry.deploy._approval import (
    ApprovalError,
    approval_problems,
    approve,
    parse_approval,
    read_approval,
    write_approval,
)
from agent_telemetry.deploy._plan import (
    ACTIONS,
    META_LABEL,
    PENDING,
    SQL_LABEL,
    DeployedView,
    SinkPlan,
    assemble_plan,
    compute_plan_hash,
    definition_digest,
    deployment_labels,
    digest,
    judge_view,
    meta_digest,
    render_diff,
    sql_digest,
    view_plan,
)
from agent_telemetry.deploy._sink import MissingField, missing_payload_fields
from agent_telemetry.deploy._types import DryRun, TableState
from agent_telemetry.views import TableField, ViewDefinition
from agent_telemetry.views._render import ColumnDoc
from tests.deploy.test_approval import _sha, record
from tests.deploy.test_approval_gate import FIRST, PARTITIONED, SINK, plan, unmanaged
from tests.deploy.test_plan import as_applied

QUERY = "SELECT\n  1 AS a,\n  'x' AS b\n"


def hand(*, query: str = QUERY, description: str = "Runs, one a row. Zoë") -> ViewDefinition:
    """A small generated view, made by hand so the pinned digests below do not move when
    the view generator changes."""
    return ViewDefinition(
        name="run",
        layout="partitioned",
        project="p",
        dataset="d",
        query=query,
        ddl="",
        description=description,
        columns=(ColumnDoc("a", "INT64", "The a."), ColumnDoc("B", "STRING", "")),
        labels={"managed-by": "agent-telemetry", "layout": "partitioned"},
        sql_sha256=sql_digest(query),
        schema_version=1,
        event=None,
    )


VIEW = hand()
SCHEMA = (TableField("a", "INTEGER", description="The a."), TableField("B", "STRING"))


def applied(view: ViewDefinition = VIEW, **changes: Any) -> TableState:
    """``view`` as BigQuery reports it after apply (plus a label someone else set)."""
    state = TableState(
        table_id=view.table_id,
        kind="VIEW",
        labels={"team": "growth", **deployment_labels(view)},
        description=view.description,
        schema=SCHEMA,
        view_query=view.query,
        modified_ms=7,
    )
    return replace(state, **changes)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- digests that outlive one run -------------------------------------------------------


def test_the_meta_label_is_sha256_of_canonical_utf8_json() -> None:
    """The ``meta-sha256`` label is written on the deployed view and read by the next
    version: its format (sorted keys, no spaces, UTF-8, lower-cased column names, None as
    "") may not drift, or every deployed view would read as drifted after an upgrade."""
    canonical = '{"columns":[["a","x"],["b",""]],"description":"Zoë"}'
    assert meta_digest("Zoë", [("A", "x"), ("b", None)]) == _sha256(canonical)
    assert meta_digest(None, []) == _sha256('{"columns":[],"description":""}')
    assert digest({"b": 1, "a": "ë"}) == _sha256('{"a":"ë","b":1}')


def test_the_plan_hash_is_sha256_of_its_canonical_json() -> None:
    """The hash a committed approval record holds and the next version recomputes."""
    canonical = (
        '{"format":1,"layout":"partitioned",'
        '"sink":{"missing":["jsonPayload.n INTEGER"],"table":"p.logs.t"},'
        '"source":"p.logs.t","target":"p.d","views":[["run","create","a","b","c"]]}'
    )
    assert compute_plan_hash(
        target="p.d",
        source="p.logs.t",
        layout="partitioned",
        views=[("run", "create", "a", "b", "c")],
        sink_table="p.logs.t",
        sink_missing=["jsonPayload.n INTEGER"],
    ) == "sha256:" + _sha256(canonical)


def test_the_recorded_definition_and_deployed_digests_are_stable() -> None:
    """``definition_sha256`` and ``deployed_sha256`` are stored in approval records: the
    same view and the same deployed state hash the same in the next version."""
    assert definition_digest(VIEW) == (
        "0954dd29381d030ea231ba30e9ddb65cca4edddb2b68297b121522d6703701e0"
    )
    assert DeployedView(None).fingerprint() == _sha256('{"exists":false}')
    state = applied(description=None)
    assert DeployedView(state, DryRun(SCHEMA)).fingerprint() == (
        "08db44131e63c7199b566cffba66565c1e7087ff8a592db97f2b0b1a33d746e3"
    )
    assert DeployedView(state, DryRun((), "job x failed")).fingerprint() == (
        "f1e35deba723f010336d3d348bda18cc6f9f0ed11f9f59edd2432097caacc9a8"
    )
    assert DeployedView(state).fingerprint() == (
        "8b7f8364642bbea48cc32fe2bd8f6dc6ba602506af35858e02acf2dfdf29b1cd"
    )


# -- the deployed-view fingerprint ------------------------------------------------------


def test_the_fingerprint_ignores_the_order_labels_come_back_in() -> None:
    state = applied()
    reordered = replace(state, labels=dict(reversed(state.labels.items())))
    assert list(reordered.labels) != list(state.labels)
    assert DeployedView(reordered).fingerprint() == DeployedView(state).fingerprint()


def test_the_fingerprint_changes_with_what_the_view_outputs_and_its_description() -> None:
    state = applied()
    base = DeployedView(state, DryRun(SCHEMA)).fingerprint()
    other_output = DryRun((TableField("a", "STRING"), SCHEMA[1]))
    changed = [
        DeployedView(state, other_output),  # the view now reads other columns
        DeployedView(state, DryRun(SCHEMA, "job failed")),  # the view no longer reads
        DeployedView(state),  # no dry run of it
        DeployedView(replace(state, description="edited"), DryRun(SCHEMA)),
        DeployedView(replace(state, description="XXXX"), DryRun(SCHEMA)),
    ]
    prints = [base, *(d.fingerprint() for d in changed)]
    assert len(set(prints)) == len(prints)
    assert DeployedView(replace(state, description=None)).fingerprint() == (
        DeployedView(replace(state, description="")).fingerprint()
    )


def test_a_dry_run_error_text_does_not_change_the_fingerprint() -> None:
    """Error texts carry job ids; that the view does not read is what counts."""
    state = applied()
    first = DeployedView(state, DryRun((), "job 1: not found")).fingerprint()
    assert DeployedView(state, DryRun((), "job 2: not found")).fingerprint() == first


# -- judge_view: every verdict and its reasons ------------------------------------------


def test_a_table_of_the_views_name_is_unmanaged() -> None:
    verdict = judge_view(VIEW, DeployedView(applied(kind="TABLE")))
    assert (verdict.action, verdict.reasons) == (
        "unmanaged",
        ("a table of this name exists; agent-telemetry only writes views",),
    )


def test_a_view_without_the_managed_by_label_is_unmanaged_and_says_so() -> None:
    verdict = judge_view(VIEW, DeployedView(applied(labels={"team": "growth"})))
    assert (verdict.action, verdict.reasons) == (
        "unmanaged",
        ("exists without the label managed-by=agent-telemetry",),
    )


@pytest.mark.parametrize("lacking", [SQL_LABEL, META_LABEL])
def test_a_managed_view_lacking_either_record_label_is_drifted(lacking: str) -> None:
    labels = {k: v for k, v in applied().labels.items() if k != lacking}
    verdict = judge_view(VIEW, DeployedView(applied(labels=labels)))
    assert (verdict.action, verdict.reasons) == (
        "drifted",
        ("labelled managed but carries no sql-sha256/meta-sha256 record",),
    )


def test_descriptions_edited_outside_the_tool_are_drift() -> None:
    verdict = judge_view(VIEW, DeployedView(applied(description="edited"), DryRun(SCHEMA)))
    assert (verdict.action, verdict.reasons) == (
        "drifted",
        ("its description or column descriptions differ from what was applied",),
    )


def test_output_columns_other_than_the_applied_schema_are_drift() -> None:
    output = DryRun((*SCHEMA, TableField("c", "STRING")))
    verdict = judge_view(VIEW, DeployedView(applied(), output))
    assert (verdict.action, verdict.reasons) == (
        "drifted",
        ("its output columns differ from the schema agent-telemetry applied",),
    )


def test_a_half_written_view_of_other_sql_names_both_reasons() -> None:
    old = hand(query="SELECT\n  1 AS a\n")
    labels = {**applied(old).labels, META_LABEL: PENDING}
    verdict = judge_view(VIEW, DeployedView(applied(old, labels=labels)))
    assert (verdict.action, verdict.reasons, verdict.resumable) == (
        "update",
        ("an earlier apply stopped before it set descriptions and labels", "SQL changed"),
        False,
    )


def test_a_changed_description_is_an_update_that_says_so() -> None:
    old = hand(description="Old runs.")
    verdict = judge_view(VIEW, DeployedView(applied(old), DryRun(SCHEMA)))
    assert (verdict.action, verdict.reasons) == (
        "update",
        ("description or column descriptions changed",),
    )
    renamed = replace(VIEW, columns=(VIEW.columns[0], ColumnDoc("B", "STRING", "Now said.")))
    verdict = judge_view(renamed, DeployedView(applied(), DryRun(SCHEMA)))
    assert verdict.reasons == ("description or column descriptions changed",)


# -- the diff text ----------------------------------------------------------------------

OLD = hand(query="SELECT\n  1 AS a\n", description="Old runs.")
DEPLOYED = applied(
    OLD,
    description=None,
    schema=(TableField("a", "INTEGER"), TableField("B", "STRING", description="old b")),
)
METADATA = [
    "--- deployed/run",
    "+++ generated/run",
    "{hunk}",
    "-# description: {before}",
    "-# column a INTEGER: ",
    "-# column B STRING: old b",
    "+# description: Runs, one a row. Zoë",
    "+# column a INTEGER: The a.",
    "+# column B STRING: ",
    " # label layout=partitioned",
    " # label managed-by=agent-telemetry",
    " # label team=growth",
]


def _metadata(hunk: str, before: str = "") -> list[str]:
    return [line.format(hunk=hunk, before=before) for line in METADATA]


def test_the_diff_shows_metadata_then_the_sql_lines() -> None:
    assert render_diff(VIEW, DEPLOYED).splitlines() == [
        *_metadata("@@ -1,8 +1,9 @@"),
        " SELECT",
        "-  1 AS a",
        "+  1 AS a,",
        "+  'x' AS b",
    ]


def test_without_the_deployed_sql_the_diff_compares_sql_sha256_and_says_so() -> None:
    old_label, new_label = deployment_labels(OLD)[SQL_LABEL], deployment_labels(VIEW)[SQL_LABEL]
    assert render_diff(VIEW, replace(DEPLOYED, view_query=None)) == "\n".join(
        [
            *_metadata("@@ -1,7 +1,7 @@"),
            f"-# sql-sha256: {old_label}",
            f"+# sql-sha256: {new_label}",
            "(the server did not return the deployed SQL; compare sql-sha256)",
        ]
    )


def test_without_the_deployed_sql_and_without_its_label_the_diff_shows_none() -> None:
    new_label = deployment_labels(VIEW)[SQL_LABEL]
    state = replace(DEPLOYED, view_query=None, labels={"team": "growth"})
    lines = render_diff(VIEW, state).splitlines()
    assert lines[-3:] == [
        "-# sql-sha256: (none)",
        f"+# sql-sha256: {new_label}",
        "(the server did not return the deployed SQL; compare sql-sha256)",
    ]
    assert "+# label managed-by=agent-telemetry" in lines


def test_a_metadata_only_change_without_the_deployed_sql_has_no_sql_note() -> None:
    same_sql = applied(
        hand(description="Old runs."),
        description="Old runs.",
        schema=DEPLOYED.schema,
        view_query=None,
    )
    assert render_diff(VIEW, same_sql) == "\n".join(
        _metadata("@@ -1,6 +1,6 @@", before="Old runs.")
    )


# -- view_plan, and the plan's exit code -------------------------------------------------


def test_a_view_plan_records_the_deployed_state_the_dry_run_and_the_diff() -> None:
    deployed = DeployedView(DEPLOYED, DryRun(DEPLOYED.schema))
    dry_run = DryRun(SCHEMA)
    line = view_plan(VIEW, deployed, dry_run)
    assert line.action == "drifted"  # its descriptions were edited too
    assert line.deployed is deployed
    assert line.dry_run is dry_run
    assert line.diff == render_diff(VIEW, DEPLOYED)


@pytest.mark.parametrize(
    "deployed",
    [
        DeployedView(None),  # create
        DeployedView(applied(), DryRun(SCHEMA)),  # unchanged
        DeployedView(applied(kind="TABLE")),  # unmanaged: a table, not a view
    ],
    ids=["create", "unchanged", "table"],
)
def test_only_a_changed_view_has_a_diff(deployed: DeployedView) -> None:
    assert view_plan(VIEW, deployed, DryRun(SCHEMA)).diff == ""


def test_an_unchanged_view_has_no_diff_even_where_the_server_spells_it_otherwise() -> None:
    """BigQuery matches column names case-insensitively: a view applied with column ``B``
    may come back as ``b`` and is still unchanged, so there is nothing to show."""
    lower = (SCHEMA[0], TableField("b", "STRING"))
    deployed = DeployedView(applied(schema=lower), DryRun(lower))
    line = view_plan(VIEW, deployed, DryRun(SCHEMA))
    assert (line.action, line.diff) == ("unchanged", "")


def test_a_failing_dry_run_makes_the_plan_unappliable() -> None:
    lines = tuple(
        view_plan(v, DeployedView(None), DryRun((), "boom") if i == 1 else DryRun(()))
        for i, v in enumerate(PARTITIONED)
    )
    failing = assemble_plan(
        target="p.d",
        source=SINK,
        layout="partitioned",
        views=lines,
        sink=SinkPlan(table_id=SINK, state=None, missing=()),
    )
    assert failing.dry_run_failures == (lines[1],)
    assert failing.exit_code() == 1


# -- the approval record ----------------------------------------------------------------


def _resealed(data: dict[str, Any]) -> str:
    """The record with every digest recomputed: what someone editing it by hand, and
    knowing the format, would write."""
    fields = {k: v for k, v in data.items() if k not in ("field_sha256", "record_sha256")}
    digests = {k: _sha(v) for k, v in fields.items()}
    return json.dumps({**fields, "field_sha256": digests, "record_sha256": _sha(digests)})


def _stored() -> dict[str, Any]:
    return json.loads(record().to_json())


def _refusal(text: str) -> str:
    with pytest.raises(ApprovalError) as caught:
        parse_approval(text, "approval.json")
    return str(caught.value)


def test_an_older_format_is_refused_with_the_whole_way_out() -> None:
    data = _stored() | {"format": "agent-telemetry-approval/1"}
    assert _refusal(json.dumps(data)) == (
        "approval.json: not an agent-telemetry-approval/3 record (format); "
        "older records do not cover every field: run `views approve` again"
    )


def test_wrongly_typed_fields_are_named_by_their_path() -> None:
    data = _stored()
    data["views"][0]["action"] = 1
    data["sink"]["table"] = 2
    assert _refusal(json.dumps(data)) == (
        "approval.json: not an approval record (sink.table, views.0.action)"
    )


def test_a_lone_surrogate_is_refused_as_a_malformed_record() -> None:
    data = _stored() | {"target": "\ud800"}
    assert _refusal(json.dumps(data)) == "approval.json: not an approval record ((top level))"


def test_without_an_origin_a_refusal_calls_the_text_approval() -> None:
    with pytest.raises(ApprovalError) as caught:
        parse_approval("{")
    assert str(caught.value) == "approval: not JSON"


def test_malformed_digests_are_refused_by_name() -> None:
    data = _stored() | {"field_sha256": []}
    assert _refusal(json.dumps(data)) == "approval.json: not an approval record (field_sha256)"


def test_an_edited_record_sha256_is_refused_with_its_own_message() -> None:
    data = _stored() | {"record_sha256": "0" * 64}
    assert _refusal(json.dumps(data)) == (
        "approval.json: record_sha256 does not match field_sha256 "
        "(one of them was edited after approval)"
    )


def test_a_field_dropped_from_the_digests_and_resealed_is_refused_by_name() -> None:
    data = _stored()
    digests = {k: v for k, v in data.pop("field_sha256").items() if k != "approved_by"}
    text = json.dumps(data | {"field_sha256": digests, "record_sha256": _sha(digests)})
    assert _refusal(text) == (
        "approval.json: edited after approval: approved_by (run `views approve` again)"
    )
    data = _stored()
    digests = data.pop("field_sha256") | {"colour": "0" * 64}
    text = json.dumps(data | {"field_sha256": digests, "record_sha256": _sha(digests)})
    assert _refusal(text) == (
        "approval.json: edited after approval: colour (run `views approve` again)"
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            {"approved_by": "Ana\x1b[2J", "approver_identity.by_flag": "Ana\x1b[2J"},
            "approval.json: approved_by: contains control or unprintable characters",
        ),
        (
            {"approver_identity.by_flag": "Mallory"},
            "approval.json: approver_identity.by_flag differs from approved_by",
        ),
        (
            {"approver_identity.git_user": "Ana\x1b[2J"},
            "approval.json: approver_identity.git_user: contains control or unprintable characters",
        ),
        (
            {"approver_identity.gcloud_account": "x" * 101},
            "approval.json: approver_identity.gcloud_account: longer than 100 characters",
        ),
        (
            {"approved_at": "yesterday"},
            "approval.json: approved_at is not a UTC time like 2026-01-02T03:04:05Z",
        ),
        (
            {"plan_hash": "sha256:" + "0" * 64},
            "approval.json: plan_hash does not match the approved views and sink",
        ),
    ],
    ids=["approved_by", "by_flag", "git_user", "gcloud_account", "approved_at", "plan_hash"],
)
def test_a_resealed_edit_is_still_checked_and_named(edit: dict[str, str], message: str) -> None:
    data = _stored()
    for path, value in edit.items():
        *parents, leaf = path.split(".")
        node = data
        for part in parents:
            node = node[part]
        node[leaf] = value
    assert _refusal(_resealed(data)) == message


def test_read_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "approval.json"
    for path, message in [
        (missing, f"{missing}: no such file"),
        (tmp_path, f"{tmp_path}: cannot read (IsADirectoryError)"),
    ]:
        with pytest.raises(ApprovalError) as caught:
            read_approval(path)
        assert str(caught.value) == message
    missing.write_bytes(b"\xff{}")
    with pytest.raises(ApprovalError) as caught:
        read_approval(missing)
    assert str(caught.value) == f"{missing}: is not UTF-8 text (byte 0)"
    missing.write_text("{", encoding="utf-8")
    with pytest.raises(ApprovalError) as caught:
        read_approval(missing)
    assert str(caught.value) == f"{missing}: not JSON"


def test_a_write_error_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ApprovalError) as caught:
        write_approval(record(), tmp_path)
    assert str(caught.value) == f"{tmp_path}: is not a regular file; refused"


def test_a_record_reads_back_under_an_ascii_locale(tmp_path: Path) -> None:
    """The record is UTF-8 whatever the machine's locale: a name like Zoë must survive a
    CI runner or a container with LC_ALL=C. Written here, read and written again by a
    process under the C locale, read back here (both functions run in this process too,
    so ``make mutation`` runs this test for their mutants, and the child inherits the
    mutant)."""
    approval = record().model_copy(update={"approved_by": "Zo\u00eb"})
    approval = approval.model_copy(
        update={
            "approver_identity": approval.approver_identity.model_copy(
                update={"by_flag": "Zo\u00eb"}
            )
        }
    )
    here, there = tmp_path / "here.json", tmp_path / "there.json"
    write_approval(approval, here)
    code = (
        "import sys; from pathlib import Path\n"
        "from agent_telemetry.deploy._approval import read_approval, write_approval\n"
        "write_approval(read_approval(Path(sys.argv[1])), Path(sys.argv[2]))\n"
        "print(sys.flags.utf8_mode, sys.getfilesystemencoding())\n"
    )
    root = str(Path(agent_telemetry.__file__).parents[1])
    env = {
        **os.environ,
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONCOERCECLOCALE": "0",
        "PYTHONUTF8": "0",
        "PYTHONPATH": root,
    }
    done = subprocess.run(
        [sys.executable, "-X", "utf8=0", "-c", code, str(here), str(there)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "ascii"]  # the child's locale really is ASCII
    assert read_approval(there) == approval
    assert there.read_bytes().count("Zo\u00eb".encode()) == 2


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's local time zone is UTC+9 (a POSIX TZ rule: no tz database needed)."""
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("tokyo")
def test_the_approval_time_is_utc_whatever_the_local_time_zone() -> None:
    now = datetime(2026, 1, 2, 12, 0, 0, 999, tzinfo=timezone(timedelta(hours=2)))
    assert approve(plan(), "Ana", now=now).approved_at == "2026-01-02T10:00:00Z"


def test_every_view_is_checked_after_one_the_approval_does_not_know() -> None:
    approval = approve(plan(views=PARTITIONED[1:]), "Ana Analyst")
    later = plan(deployed={PARTITIONED[1].name: unmanaged(PARTITIONED[1])})
    assert later.views[0].name == FIRST  # the new view comes first
    assert approval_problems(approval, later) == [
        "the set of views differs from the approved one",
        f"{PARTITIONED[1].name}: the deployed view changed since approval (now: unmanaged)",
    ]


def test_uncovered_sink_fields_are_listed_comma_separated() -> None:
    approval = approve(plan(), "Ana Analyst")
    missing = (
        MissingField("jsonPayload.a", TableField("a", "INTEGER")),
        MissingField("jsonPayload.b", TableField("b", "STRING")),
    )
    lacking = plan(sink=SinkPlan(table_id=SINK, state=None, missing=missing))
    assert approval_problems(approval, lacking) == [
        "sink fields to add that the approval does not cover: "
        "jsonPayload.a INTEGER, jsonPayload.b STRING"
    ]


def test_exit_code_is_0_with_nothing_to_do_and_2_with_changes_pending() -> None:
    """``views plan --exit-code``: CI reads 0 as in sync and 2 as changes pending."""
    settled = {v.name: as_applied(v) for v in PARTITIONED}
    assert plan(deployed=settled).exit_code() == 0
    assert plan(deployed={**settled, FIRST: DeployedView(None)}).exit_code() == 1
    gaps = SinkPlan(table_id=SINK, state=None, missing=missing_payload_fields((), "partitioned"))
    assert plan(deployed=settled, sink=gaps).exit_code() == 1  # only sink fields to add


def test_counts_give_each_action_its_number_of_views() -> None:
    settled = {v.name: as_applied(v) for v in PARTITIONED}
    created = {PARTITIONED[0].name: DeployedView(None), PARTITIONED[1].name: DeployedView(None)}
    counts = plan(deployed={**settled, **created}).counts()
    assert counts["create"] == 2
    assert counts["unchanged"] == len(PARTITIONED) - 2
    assert sum(counts.values()) == len(PARTITIONED)
    assert set(counts) == set(ACTIONS)
