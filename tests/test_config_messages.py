"""What a user reads when telemetry.toml is wrong, line by line: the file, the key at
fault and what it must hold, never the value (the file may come from anyone's branch).
And what a valid file means: the defaults and the boundaries of every setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_telemetry._parse import MAX_NESTING
from agent_telemetry.config import (
    ConfigError,
    DeploymentConfig,
    check_exceptions,
    identifier_problem,
    load_config,
    parse_config,
)

BASE = (
    '[source]\nproject = "acme-agents-prod"\ndataset = "agent_logs"\n'
    '[target]\nproject = "acme-agents-prod"\ndataset = "agent_telemetry"\n'
)
GOOD: dict[str, object] = {
    "source": {"project": "acme-agents-prod", "dataset": "agent_logs"},
    "target": {"project": "acme-agents-prod", "dataset": "agent_telemetry"},
}
KNOWN = {"upload_done": frozenset({"upload_bytes", "pressed_key"}), "cache_probe": frozenset()}
SECRET = "jane.doe@example.com"


def _exception(**keys: str) -> str:
    return "[[exceptions]]\n" + "".join(f'{key} = "{value}"\n' for key, value in keys.items())


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "telemetry.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _refusal(data: object, origin: str = "telemetry.toml") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(data, origin)  # type: ignore[arg-type]
    return str(caught.value).split("\n")


# --- [[exceptions]] against the events that exist --------------------------------------


def test_an_exception_naming_no_known_event_is_refused_by_its_place(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        BASE
        + _exception(rule="EVENT_NO_DELETE", event="upload_done", reason="retired")
        + _exception(rule="EVENT_NO_DELETE", event=SECRET, reason="retired"),
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path, KNOWN)
    assert str(caught.value) == (
        f"{path}: exceptions[1].event: not a known event "
        "(none of the models, registered versions or the lock has it)"
    )


def test_an_exception_naming_no_field_of_its_event_is_refused_by_its_place(
    tmp_path: Path,
) -> None:
    path = _file(
        tmp_path,
        BASE + _exception(rule="FIELD_NO_DELETE", event="upload_done", field=SECRET, reason="x"),
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path, KNOWN)
    assert str(caught.value) == (
        f"{path}: exceptions[0].field: not a field of that event "
        "(in any of its versions or the lock)"
    )


def test_every_wrong_exception_is_named_at_once() -> None:
    config = parse_config(
        {
            **GOOD,
            "exceptions": [
                {"rule": "FIELD_NO_DELETE", "event": "cache_probe", "field": "a", "reason": "r"},
                {"rule": "EVENT_NO_DELETE", "event": "gone", "reason": "r"},
            ],
        }
    )
    with pytest.raises(ConfigError) as caught:
        check_exceptions(config, KNOWN)
    assert str(caught.value).split("\n") == [
        "config: exceptions[0].field: not a field of that event "
        "(in any of its versions or the lock)",
        "config: exceptions[1].event: not a known event "
        "(none of the models, registered versions or the lock has it)",
    ]


def test_exceptions_naming_known_events_and_fields_pass(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        BASE
        + _exception(rule="EVENT_NO_DELETE", event="cache_probe", reason="retired")
        + _exception(rule="FIELD_NO_DELETE", event="upload_done", field="pressed_key", reason="r"),
    )
    config = load_config(str(path), KNOWN)
    assert [(e.rule, e.event, e.field) for e in config.exceptions] == [
        ("EVENT_NO_DELETE", "cache_probe", None),
        ("FIELD_NO_DELETE", "upload_done", "pressed_key"),
    ]
    assert check_exceptions(config, KNOWN) is config


def test_without_known_events_the_exceptions_are_not_checked(tmp_path: Path) -> None:
    path = _file(tmp_path, BASE + _exception(rule="EVENT_NO_DELETE", event="gone", reason="r"))
    assert [e.event for e in load_config(path).exceptions] == ["gone"]


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (
            {"rule": SECRET, "event": "e", "reason": "r"},
            "exceptions[0].rule: not a compatibility rule that can be excepted; one of: ",
        ),
        (
            {"rule": "EVENT_NO_DELETE", "event": "e", "reason": "  "},
            "exceptions[0].reason: empty: say why breaking readers is acceptable",
        ),
        ({"rule": "EVENT_NO_DELETE", "event": "e"}, "exceptions[0].reason: required key"),
        (
            {"rule": "EVENT_NO_DELETE", "event": "e", "reason": "r", SECRET: "x"},
            "exceptions[0].<unprintable key>: unknown key",
        ),
    ],
)
def test_a_malformed_exception_entry_names_its_key(entry: dict[str, str], line: str) -> None:
    lines = _refusal({**GOOD, "exceptions": [entry]})
    assert len(lines) == 1
    assert lines[0].startswith(f"telemetry.toml: {line}")
    assert SECRET not in lines[0]


# --- every kind of wrong value has its own words -----------------------------------------


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ({**GOOD, "extra": 1}, "extra: unknown key"),
        ({"source": GOOD["source"]}, "target: required key is missing"),
        (
            {**GOOD, "source": {"project": "acme-agents-prod", "dataset": "d", "layout": SECRET}},
            "source.layout: must be one of partitioned, sharded, analytics",
        ),
        (
            {**GOOD, "views": {"layouts": "partitioned"}},
            "views.layouts: wrong type (a non-empty list expected)",
        ),
        (
            {**GOOD, "views": {"layouts": []}},
            "views.layouts: wrong type (a non-empty list expected)",
        ),
        ({**GOOD, "exceptions": SECRET}, "exceptions: wrong type (a non-empty list expected)"),
        (
            {**GOOD, "source": {"project": "acme-agents-prod", "dataset": "d", "dedupe": "no"}},
            "source.dedupe: wrong type (true or false expected)",
        ),
        (
            {**GOOD, "target": {"project": "acme-agents-prod", "dataset": 7}},
            "target.dataset: wrong type (a string expected)",
        ),
        ({**GOOD, "target": SECRET}, "target: wrong type (a table expected)"),
        ({**GOOD, "views": [1]}, "views: wrong type (a table expected)"),
        ({**GOOD, "check_logs": {"k_anonymity": 1}}, "check_logs.k_anonymity: invalid value"),
        ({**GOOD, "check_logs": {"k_anonymity": "5"}}, "check_logs.k_anonymity: invalid value"),
        (
            {**GOOD, "views": {"layouts": ["partitioned", "sharded"], "dir": SECRET + "/.."}},
            "views.dir: not a relative path inside the folder of telemetry.toml "
            "('/'-separated, no '..')",
        ),
        (
            {**GOOD, "source": {"project": SECRET, "dataset": "d"}},
            "source.project: not a Google Cloud project id: 6-30 lowercase letters, digits or "
            "hyphens, starting with a letter (optionally 'domain:' first)",
        ),
        (
            {
                **GOOD,
                "source": {"project": "acme-agents-prod", "dataset": "d", "log_id": SECRET + " x"},
            },
            "source.log_id: not a Cloud Logging log id: letters, digits, '/', '_', '-', '.'",
        ),
        (
            {**GOOD, "target": {"project": "acme-agents-prod", "dataset": SECRET}},
            "target.dataset: not a BigQuery name: letters, digits and underscores, at most 1024",
        ),
        (
            {**GOOD, "catalogue": {"module": SECRET, "lock": "l.json"}},
            "catalogue.module: not a dotted Python import path (myservice.telemetry)",
        ),
        ([SECRET], "(top level): wrong type (a table expected)"),
    ],
)
def test_each_wrong_value_reads_as_what_the_key_must_hold(data: object, line: str) -> None:
    assert _refusal(data) == [f"telemetry.toml: {line}"]


def test_a_wrong_value_inside_a_list_is_named_by_its_index() -> None:
    lines = _refusal({**GOOD, "views": {"layouts": ["partitioned", SECRET]}})
    assert lines == [
        "telemetry.toml: views.layouts[1]: must be one of partitioned, sharded, analytics"
    ]


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("a" * 64, "a" * 64),
        ("a" * 65, "<unprintable key>"),
        ("my-key_2", "my-key_2"),
        ("MyKey", "MyKey"),
        ("", "<unprintable key>"),
        ("a.b", "<unprintable key>"),
    ],
)
def test_an_unknown_key_is_shown_only_when_plainly_a_name(key: str, shown: str) -> None:
    assert _refusal({**GOOD, "source": {**GOOD["source"], key: 1}}, "t") == [  # type: ignore[dict-item]
        f"t: source.{shown}: unknown key"
    ]


def test_every_problem_is_one_line_in_the_order_of_the_file() -> None:
    assert _refusal({"source": {"project": "acme-agents-prod"}, "views": {"x": 1}}, "f") == [
        "f: source.dataset: required key is missing",
        "f: target: required key is missing",
        "f: views.x: unknown key",
    ]


def test_views_layouts_must_build_the_sources_own_layout() -> None:
    assert _refusal({**GOOD, "views": {"layouts": ["sharded"]}}, "f.toml") == [
        "f.toml: views.layouts: must include source.layout"
    ]
    config = parse_config({**GOOD, "views": {"layouts": ["sharded", "partitioned"]}})
    assert config.layouts == ("partitioned", "sharded")


# --- reading the file ---------------------------------------------------------------------


def test_a_file_that_cannot_be_read_is_named_with_why(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "gone.toml")
    assert str(caught.value) == f"{tmp_path / 'gone.toml'}: no such file"
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == f"{tmp_path}: cannot read (IsADirectoryError)"
    latin = tmp_path / "latin.toml"
    latin.write_bytes(BASE.encode() + b"# caf\xe9 " + SECRET.encode() + b"\n")
    with pytest.raises(ConfigError) as caught:
        load_config(latin)
    assert str(caught.value) == f"{latin}: cannot read (UnicodeDecodeError)"


def test_invalid_toml_gives_line_and_column_not_the_text(tmp_path: Path) -> None:
    path = _file(tmp_path, BASE + f"dataset = {SECRET}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not valid TOML (")
    assert "(at line 7, column 11))" in message
    assert SECRET not in message


def test_a_file_nested_too_deep_is_refused_by_name(tmp_path: Path) -> None:
    path = _file(tmp_path, BASE + "x = " + "[" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: nested deeper than {MAX_NESTING} levels"


def test_a_utf8_file_loads(tmp_path: Path) -> None:
    path = _file(tmp_path, "# café\n" + BASE)
    assert load_config(path).target.dataset == "agent_telemetry"


# --- what a valid file means ---------------------------------------------------------------


def test_the_defaults_of_a_minimal_file(tmp_path: Path) -> None:
    config = load_config(_file(tmp_path, BASE))
    assert isinstance(config, DeploymentConfig)
    assert config.source.layout == "partitioned"
    assert config.source.table is None
    assert config.source.log_id == "run.googleapis.com/stdout"
    assert config.source.dedupe is True
    assert config.exceptions == ()
    assert config.catalogue is None
    assert (config.views.dir, config.views.docs, config.views.layouts) == (None, None, None)
    assert config.check_logs.k_anonymity == 5
    assert config.layouts == ("partitioned",)


@pytest.mark.parametrize("k", [2, 1_000_000])
def test_k_anonymity_accepts_its_bounds(k: int) -> None:
    assert parse_config({**GOOD, "check_logs": {"k_anonymity": k}}).check_logs.k_anonymity == k


@pytest.mark.parametrize("k", [1, 1_000_001, True])
def test_k_anonymity_refuses_beyond_its_bounds(k: int) -> None:
    assert _refusal({**GOOD, "check_logs": {"k_anonymity": k}}, "t") == [
        "t: check_logs.k_anonymity: invalid value"
    ]


@pytest.mark.parametrize(
    ("layout", "table", "reads"),
    [
        (
            "partitioned",
            None,
            {"partitioned": "run_googleapis_com_stdout", "analytics": "_AllLogs"},
        ),
        ("analytics", None, {"analytics": "_AllLogs", "sharded": "run_googleapis_com_stdout_*"}),
        (
            "analytics",
            "_Default",
            {"analytics": "_Default", "sharded": "run_googleapis_com_stdout_*"},
        ),
        (
            "sharded",
            "stdout",
            {"sharded": "stdout_*", "partitioned": "stdout", "analytics": "_AllLogs"},
        ),
        ("partitioned", "stdout", {"partitioned": "stdout", "analytics": "_AllLogs"}),
    ],
)
def test_the_table_each_layout_reads(layout: str, table: str | None, reads: dict[str, str]) -> None:
    source: dict[str, object] = {"project": "acme-agents-prod", "dataset": "d", "layout": layout}
    if table is not None:
        source["table"] = table
    config = parse_config({**GOOD, "source": source})
    assert {asked: config.source.table_for(asked) for asked in reads} == reads  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    ["a" * 1024, "lock.json", "ops/lock.json", "..lock/x.json", "a b/c~.json", "./x.json"],
)
def test_a_relative_path_inside_the_folder_is_accepted(value: str) -> None:
    config = parse_config({**GOOD, "views": {"dir": value}})
    assert config.views.dir == value


@pytest.mark.parametrize(
    "value",
    ["a" * 1025, "a/../b", "x\x1fy", "x\x7fy", "x\x00", "/abs", "C:x", "\\\\server\\share", "a\\b"],
)
def test_a_path_leaving_the_folder_is_refused(value: str) -> None:
    assert _refusal({**GOOD, "views": {"docs": value}}, "t") == [
        "t: views.docs: not a relative path inside the folder of telemetry.toml "
        "('/'-separated, no '..')"
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("project", "ab" + "c" * 28),
        ("project", "example.com:acme-prod"),
        ("project", "a1-b2-c"),
        ("log_id", "a" * 511),
        ("log_id", "projects/p/logs/run.googleapis.com%2Fstdout".replace("%2F", "_")),
        ("dataset", "A" * 1024),
    ],
)
def test_identifier_bounds_that_are_accepted(key: str, value: str) -> None:
    config = parse_config({**GOOD, "source": {**GOOD["source"], key: value}})  # type: ignore[dict-item]
    assert getattr(config.source, key) == value


@pytest.mark.parametrize(
    ("key", "value"),
    [("log_id", "a" * 512), ("log_id", ""), ("dataset", "A" * 1025), ("project", "abc-d")],
)
def test_identifier_bounds_that_are_refused(key: str, value: str) -> None:
    lines = _refusal({**GOOD, "source": {**GOOD["source"], key: value}}, "t")  # type: ignore[dict-item]
    assert len(lines) == 1
    assert lines[0].startswith(f"t: source.{key}: not a")


def test_a_wrong_key_in_a_file_is_named_with_the_files_path(tmp_path: Path) -> None:
    path = _file(tmp_path, BASE.replace('dataset = "agent_logs"', f'dataset = "{SECRET}"'))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: source.dataset: not a BigQuery name: letters, digits and underscores, "
        "at most 1024"
    )


def test_a_document_with_no_origin_is_called_config() -> None:
    assert _refusal_without_origin({"source": GOOD["source"]}) == [
        "config: target: required key is missing"
    ]


def _refusal_without_origin(data: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    return str(caught.value).split("\n")


@pytest.mark.parametrize(
    ("kind", "good", "rule"),
    [
        ("project", "acme-agents-prod", "a Google Cloud project id: 6-30 lowercase letters"),
        ("name", "agent_telemetry", "a BigQuery name: letters, digits and underscores"),
        ("log_id", "run.googleapis.com/stdout", "a Cloud Logging log id: letters, digits"),
        ("module", "myservice.telemetry", "a dotted Python import path (myservice.telemetry)"),
    ],
)
def test_identifier_problem_names_the_rule_never_the_value(kind: str, good: str, rule: str) -> None:
    """What `init --project/--dataset` says of a value: None when it fits, else the rule."""
    assert identifier_problem(kind, good) is None
    problem = identifier_problem(kind, SECRET)
    assert problem is not None
    assert problem.startswith(f"not {rule}")
    assert SECRET not in problem
