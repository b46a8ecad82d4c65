"""The binding test: every model field is exactly one view column that reads exactly its key.

Mutation tests show the check is not vacuous: templates and SQL that drop, rename or
swap a column make it fail.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path

import jinja2
import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, catalogue
from agent_telemetry.views import (
    PAYLOAD_COLUMN,
    ViewDefinition,
    _render,
    binding_violations,
    column_lineage,
    generate_views,
    parse_view,
    view_lineage,
)
from tests.conftest import EXAMPLE_CONFIG

TEMPLATES = Path(_render.__file__).parent / "templates"
CASES = [(layout, spec.name) for layout in LAYOUTS for spec in catalogue()]
FIELD_CASES = [
    (layout, spec.name, field.name)
    for layout in LAYOUTS
    for spec in catalogue()
    for field in spec.fields
]


@cache
def _views(layout: Layout) -> dict[str, ViewDefinition]:
    from agent_telemetry.config import load_config

    return {v.name: v for v in generate_views(load_config(EXAMPLE_CONFIG), layout)}


@cache
def _lineage(layout: Layout, event: str) -> dict[str, frozenset[str]]:
    return view_lineage(_views(layout)[event].query, layout)


def _spec(name: str) -> EventSpec:
    return next(s for s in catalogue() if s.name == name)


@pytest.mark.parametrize(("layout", "event"), CASES)
def test_every_event_view_is_bound_to_its_model(layout: Layout, event: str) -> None:
    view = _views(layout)[event]
    assert binding_violations(view.query, _spec(event), layout) == []
    assert binding_violations(view.ddl, _spec(event), layout) == []


@pytest.mark.parametrize(("layout", "event", "field"), FIELD_CASES)
def test_every_field_column_reads_exactly_its_payload_key(
    layout: Layout, event: str, field: str
) -> None:
    assert _lineage(layout, event)[field] == {f"{PAYLOAD_COLUMN[layout]}.{field}"}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_envelope_columns_read_their_sources(layout: Layout) -> None:
    query = _views(layout)["pipeline_run"].query
    payload = PAYLOAD_COLUMN[layout]
    assert column_lineage(query, layout, "timestamp") == {"timestamp"}
    assert column_lineage(query, layout, "schema_version") == {f"{payload}.schema_version"}
    assert column_lineage(query, layout, "invalid_fields") == {f"{payload}.invalid_fields"}


# --- mutations of the generated SQL ------------------------------------------------


def _outer(tree: exp.Expr) -> exp.Select:
    assert isinstance(tree, exp.Select)
    return tree


def _mutate(query: str, change: Callable[[exp.Select], None]) -> str:
    tree = _outer(sqlglot.parse_one(query, dialect="bigquery"))
    change(tree)
    return tree.sql(dialect="bigquery", pretty=True)


def _select(tree: exp.Select, name: str) -> exp.Expr:
    return next(e for e in tree.expressions if e.alias_or_name == name)


def _problems(query: str, layout: Layout = "partitioned") -> set[tuple[str, str]]:
    found = binding_violations(query, _spec("pipeline_run"), layout)
    return {(v.column, v.problem.split(";")[0]) for v in found}


def test_dropping_a_column_from_the_sql_is_caught() -> None:
    query = _mutate(
        _views("partitioned")["pipeline_run"].query,
        lambda t: _select(t, "queue_position").pop(),
    )
    assert _problems(query) == {("queue_position", "model field has no column in the view")}


def test_renaming_a_column_in_the_sql_is_caught() -> None:
    def rename(tree: exp.Select) -> None:
        _select(tree, "lane").set("alias", exp.to_identifier("queue_lane"))

    assert _problems(_mutate(_views("partitioned")["pipeline_run"].query, rename)) == {
        ("queue_lane", "is neither a model field nor an envelope column"),
        ("lane", "model field has no column in the view"),
    }


@pytest.mark.parametrize("layout", LAYOUTS)
def test_swapping_two_columns_in_the_sql_is_caught(layout: Layout) -> None:
    def swap(tree: exp.Select) -> None:
        _select(tree, "lane").set("alias", exp.to_identifier("status"))
        next(
            e for e in tree.expressions if e.alias_or_name == "status" and "lane" not in e.sql()
        ).set("alias", exp.to_identifier("lane"))

    payload = PAYLOAD_COLUMN[layout]
    found = binding_violations(
        _mutate(_views(layout)["pipeline_run"].query, swap), _spec("pipeline_run"), layout
    )
    assert {str(v) for v in found} == {
        f"pipeline_run.lane: lineage reaches {payload}.status; expected exactly {payload}.lane",
        f"pipeline_run.status: lineage reaches {payload}.lane; expected exactly {payload}.status",
    }


def test_a_duplicated_column_is_caught() -> None:
    def duplicate(tree: exp.Select) -> None:
        tree.append("expressions", _select(tree, "lane").copy())

    assert ("lane", "appears 2 times") in _problems(
        _mutate(_views("partitioned")["pipeline_run"].query, duplicate)
    )


def test_a_column_reading_two_keys_is_caught() -> None:
    def blend(tree: exp.Select) -> None:
        lane = _select(tree, "lane")
        lane.set("this", exp.func("COALESCE", exp.column("status", "lines"), lane.this))

    assert _problems(_mutate(_views("partitioned")["pipeline_run"].query, blend)) == {
        ("lane", "lineage reaches jsonPayload.lane, jsonPayload.status")
    }


def test_a_column_reading_the_envelope_instead_of_the_payload_is_caught() -> None:
    query = _views("partitioned")["pipeline_run"].query.replace(
        "SAFE_CAST(sink.jsonPayload.status AS STRING) AS status",
        "SAFE_CAST(sink.severity AS STRING) AS status",
    )
    assert _problems(query) == {("status", "lineage reaches severity")}


@pytest.mark.parametrize("name", ["nope", "status"])
def test_a_column_reading_an_unqualified_name_outside_the_payload_is_caught(name: str) -> None:
    # Not qualified by a table: the binding qualifies without sqlglot's column validation,
    # so the name must still be followed to the sink and refused there.
    query = _views("partitioned")["pipeline_run"].query.replace(
        "SAFE_CAST(sink.jsonPayload.status AS STRING) AS status",
        f"SAFE_CAST({name} AS STRING) AS status",
    )
    assert _problems(query) == {("status", f"lineage reaches {name}")}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_parsed_tree_gets_the_same_verdict_as_its_text(layout: Layout) -> None:
    """The check parses each committed file once and hands the tree over."""
    spec = _spec("pipeline_run")
    ddl = _views(layout)["pipeline_run"].ddl
    assert binding_violations(parse_view(ddl), spec, layout) == []
    payload = PAYLOAD_COLUMN[layout]
    broken = ddl.replace(f"{payload}.attempts", f"{payload}.model_calls").replace(
        "'$.attempts'", "'$.model_calls'"
    )
    assert broken != ddl
    from_text = binding_violations(broken, spec, layout)
    assert [v.column for v in from_text] == ["attempts"]
    assert binding_violations(parse_view(broken), spec, layout) == from_text


def test_a_constant_column_is_caught() -> None:
    def constant(tree: exp.Select) -> None:
        _select(tree, "attempts").set("this", exp.Null())

    assert _problems(_mutate(_views("partitioned")["pipeline_run"].query, constant)) == {
        ("attempts", "lineage reaches nothing in the sink")
    }


def test_sql_that_does_not_parse_or_reads_no_sink_is_a_violation() -> None:
    (broken,) = binding_violations("SELECT lane FROM", _spec("pipeline_run"), "sharded")
    assert (broken.column, broken.problem[:36]) == ("*", "does not parse as a BigQuery query (")
    (tableless,) = binding_violations("SELECT 1 AS lane", _spec("pipeline_run"), "sharded")
    assert str(tableless) == "pipeline_run.*: does not read exactly one sink table"


# --- mutations of the templates ----------------------------------------------------


@pytest.fixture
def mutant_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], None]:
    """Render views from a copy of the templates with one text edit applied."""
    folder = tmp_path / "templates"
    shutil.copytree(TEMPLATES, folder)

    def edit(old: str, new: str) -> None:
        path = folder / "event_view.sql.j2"
        text = path.read_text()
        assert old in text, "the mutation no longer applies to the template"
        path.write_text(text.replace(old, new, 1))
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        env.filters["lit"] = _render.sql_literal
        env.filters["on_grid"] = _render.on_grid_sql
        monkeypatch.setattr(_render, "_environment", lambda: env)

    return edit


OUTER_COLUMN = '{{ r.checked(column, "lines." ~ column.name) }} AS {{ column.name }},'
INNER_READ = "{{ r.read(column.name, column.read_as) }} AS {{ column.name }},"


def _all_violations(config: DeploymentConfig, layout: Layout) -> dict[str, set[str]]:
    views = {v.name: v for v in generate_views(config, layout)}
    return {
        spec.name: {str(v) for v in binding_violations(views[spec.name].query, spec, layout)}
        for spec in catalogue()
    }


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_template_that_drops_a_column_fails_the_binding(
    mutant_templates: Callable[[str, str], None], config: DeploymentConfig, layout: Layout
) -> None:
    mutant_templates(OUTER_COLUMN, "{% if not loop.first %}" + OUTER_COLUMN + "{% endif %}")
    found = _all_violations(config, layout)
    for spec in catalogue():
        first = spec.fields[0].name
        assert found[spec.name] == {f"{spec.name}.{first}: model field has no column in the view"}


def test_a_template_that_renames_a_column_fails_the_binding(
    mutant_templates: Callable[[str, str], None], config: DeploymentConfig
) -> None:
    mutant_templates(
        OUTER_COLUMN, OUTER_COLUMN.replace("AS {{ column.name }}", "AS {{ column.name }}_v")
    )
    violations = _all_violations(config, "partitioned")
    for spec in catalogue():
        found = violations[spec.name]
        for field in spec.fields:
            assert f"{spec.name}.{field.name}: model field has no column in the view" in found
            assert (
                f"{spec.name}.{field.name}_v: is neither a model field nor an envelope column"
                in found
            )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_template_that_swaps_columns_fails_the_binding(
    mutant_templates: Callable[[str, str], None], config: DeploymentConfig, layout: Layout
) -> None:
    # Each column reads its neighbour's key: every field of every event is wrong.
    mutant_templates(
        INNER_READ,
        "{{ r.read(view.fields[loop.index0 - 1].name, column.read_as) }} AS {{ column.name }},",
    )
    payload = PAYLOAD_COLUMN[layout]
    violations = _all_violations(config, layout)
    for spec in catalogue():
        found = violations[spec.name]
        names = spec.field_names
        assert found == {
            f"{spec.name}.{name}: lineage reaches {payload}.{names[i - 1]}; "
            f"expected exactly {payload}.{name}"
            for i, name in enumerate(names)
        }


def test_the_unmutated_templates_bind(
    mutant_templates: Callable[[str, str], None], config: DeploymentConfig
) -> None:
    mutant_templates(OUTER_COLUMN, OUTER_COLUMN)
    assert all(not v for v in _all_violations(config, "partitioned").values())
