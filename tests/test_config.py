from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.config import ConfigError, load_config, parse_config
from tests.conftest import EXAMPLE_CONFIG

GOOD = {
    "source": {"project": "acme-agents-prod", "dataset": "agent_logs", "layout": "partitioned"},
    "target": {"project": "acme-agents-prod", "dataset": "agent_telemetry"},
}
HOSTILE = [
    "logs; DROP TABLE x",
    "logs`; DROP TABLE x; --",
    "agent_logs`.`other",
    "it's",
    'say "hi"',
    "logs\nDROP",
    "",
    "a" * 1025,
    "dataset.table",
    "proj-ect`",
]
KEYS = [
    ("source", "project"),
    ("source", "dataset"),
    ("source", "table"),
    ("source", "log_id"),
    ("target", "project"),
    ("target", "dataset"),
]


def _with(section: str, key: str, value: object) -> dict[str, dict[str, object]]:
    data = {name: dict(values) for name, values in GOOD.items()}
    data[section][key] = value
    return data


def test_example_deployment_loads() -> None:
    config = load_config(EXAMPLE_CONFIG)
    assert config.source.project == "acme-agents-prod"
    assert config.source.layout == "partitioned"
    assert config.target.dataset == "agent_telemetry"


@pytest.mark.parametrize(("section", "key"), KEYS)
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_identifier_is_refused_by_key_without_echoing_it(
    section: str, key: str, value: str
) -> None:
    if key == "log_id" and value == "dataset.table":
        value = "run.googleapis.com/stdout'"  # dots are fine in a log id; a quote is not
    with pytest.raises(ConfigError) as caught:
        parse_config(_with(section, key, value), origin="telemetry.toml")
    message = str(caught.value)
    assert f"telemetry.toml: {section}.{key}: not a" in message
    if value:
        assert value not in message
    assert "DROP" not in message


def test_hostile_value_in_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.toml"
    path.write_text(
        '[source]\nproject = "acme-agents-prod"\ndataset = "logs; DROP TABLE x"\n'
        '[target]\nproject = "acme-agents-prod"\ndataset = "t"\n'
    )
    with pytest.raises(ConfigError, match=r"source\.dataset: not a BigQuery name") as caught:
        load_config(path)
    assert "DROP" not in str(caught.value)


@pytest.mark.parametrize(
    "project",
    ["abcdef", "acme-agents-prod", "a" * 30, "example.com:acme-prod", "p12345"],
)
def test_valid_project_ids_are_accepted(project: str) -> None:
    assert parse_config(_with("source", "project", project)).source.project == project


@pytest.mark.parametrize("project", ["abcde", "a" * 31, "Acme-prod", "1acme-prod", "acme-prod-"])
def test_invalid_project_ids_are_refused(project: str) -> None:
    with pytest.raises(ConfigError, match=r"source\.project: not a Google Cloud project id"):
        parse_config(_with("source", "project", project))


@given(st.text(max_size=40))
def test_any_accepted_name_is_a_plain_identifier(value: str) -> None:
    if re.fullmatch(r"[A-Za-z0-9_]{1,1024}", value) is None:
        with pytest.raises(ConfigError, match=r"source\.dataset: not a BigQuery name"):
            parse_config(_with("source", "dataset", value))
    else:
        assert parse_config(_with("source", "dataset", value)).source.dataset == value


def test_unknown_key_is_an_error() -> None:
    data = _with("source", "tabel", "x")
    with pytest.raises(ConfigError, match=r"source\.tabel: unknown key"):
        parse_config(data)
    with pytest.raises(ConfigError, match=r"view: unknown key"):
        parse_config({**GOOD, "view": {}})


def test_hostile_unknown_key_is_not_echoed() -> None:
    with pytest.raises(ConfigError, match="<unprintable key>: unknown key") as caught:
        parse_config({**GOOD, "x`; DROP TABLE y": 1})
    assert "DROP" not in str(caught.value)


def test_missing_key_and_wrong_type_are_named() -> None:
    with pytest.raises(ConfigError, match=r"target\.dataset: required key is missing"):
        parse_config({"source": GOOD["source"], "target": {"project": "acme-agents-prod"}})
    with pytest.raises(ConfigError, match=r"source\.dataset: wrong type"):
        parse_config(_with("source", "dataset", 12))


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"source\.layout: must be one of partitioned, sharded"):
        parse_config(_with("source", "layout", "streaming"))


def test_unreadable_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[source\nproject = 'x'\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_each_layout_reads_its_table() -> None:
    source = parse_config(GOOD).source
    assert source.table_for("partitioned") == "run_googleapis_com_stdout"
    assert source.table_for("sharded") == "run_googleapis_com_stdout_*"
    assert source.table_for("analytics") == "_AllLogs"
    custom = parse_config(_with("source", "table", "stdout")).source
    assert custom.table_for("sharded") == "stdout_*"
    analytics = parse_config(
        {
            "source": {**GOOD["source"], "layout": "analytics", "table": "_Default"},
            "target": GOOD["target"],
        }
    ).source
    assert analytics.table_for("analytics") == "_Default"
    assert analytics.table_for("partitioned") == "run_googleapis_com_stdout"


def test_dedupe_is_on_by_default_and_can_be_turned_off(tmp_path: Path) -> None:
    assert parse_config(GOOD).source.dedupe is True
    assert load_config(EXAMPLE_CONFIG).source.dedupe is True
    path = tmp_path / "telemetry.toml"
    path.write_text(
        '[source]\nproject = "acme-agents-prod"\ndataset = "d"\ndedupe = false\n'
        '[target]\nproject = "acme-agents-prod"\ndataset = "t"\n'
    )
    assert load_config(path).source.dedupe is False


@pytest.mark.parametrize("value", ["false", "no", 0, 1, None])
def test_dedupe_must_be_true_or_false(value: object) -> None:
    # A string "false" would be truthy: only a TOML boolean is a switch.
    with pytest.raises(ConfigError, match=r"source\.dedupe: wrong type \(true or false expected\)"):
        parse_config(_with("source", "dedupe", value))
