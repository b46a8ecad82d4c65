"""``agent-telemetry report`` on logs the load could not read whole: a gzip stream cut in
the middle, one that is garbage after gzip's magic bytes, a truncated line, a log without
telemetry. The user is told what the load found, in the words ``preview`` prints (one
definition), on stderr, so the charts on stdout stay the charts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.report import CHARTS
from tests.warehouse.broken_input import BAD_HEADER, half_gzip
from tests.warehouse.lines import entry, line, write_lines

RUN_ROW = "│ public │ 2026-05-09T07:30:00+00:00 │ ok     │ {:>4} │"
# A value only the log holds: it may be charted, never quoted in a warning.
SECRET_LANE = "premium"


@pytest.fixture(autouse=True)
def _no_deployment_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where no telemetry.toml is: the built-in config."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)


def _run(*args: str | Path) -> Result:
    env = {"COLUMNS": "200", "NO_COLOR": "1", "FORCE_COLOR": None, "TERM": "dumb"}
    return CliRunner().invoke(main, list(map(str, args)), env=env)


def _notes(preview: Result) -> list[str]:
    """What preview prints below its load table (and above the first view's summary)."""
    lines = preview.stdout.splitlines()
    below = lines.index(next(text for text in lines if text.startswith("└"))) + 1
    end = next(i for i, text in enumerate(lines) if text.startswith("pipeline_run: "))
    return lines[below:end]


def test_a_cut_gzip_draws_the_rows_before_the_cut_and_warns_as_preview_does(
    tmp_path: Path,
) -> None:
    log = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(log)
    shown = _run("preview", log)
    cut = f"{log}: the gzip stream breaks off (cut short or corrupt) at record {whole + 1:,}"
    assert _notes(shown)[0].startswith(cut), shown.stdout

    done = _run("report", log)

    assert done.exit_code == 0, done.output
    assert RUN_ROW.format(whole) in done.stdout.splitlines()  # the rows before the cut
    assert cut not in done.stdout  # stdout holds the charts only
    assert [text for text in done.stderr.splitlines() if text.startswith(str(log))] == _notes(shown)
    assert "truncated" in done.stderr  # the load's table says what was counted


def test_with_html_a_cut_gzip_still_writes_the_page_and_warns(tmp_path: Path) -> None:
    log = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(log)
    page = tmp_path / "report.html"

    done = _run("report", log, "--html", page)

    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"wrote {page}: {len(CHARTS)} charts of {whole:,} telemetry")
    assert f"{log}: the gzip stream breaks off" in done.stderr
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("html", [False, True], ids=["terminal", "html"])
def test_a_gzip_that_is_garbage_after_its_magic_is_an_error_and_nothing_is_drawn(
    tmp_path: Path, html: bool
) -> None:
    good = write_lines(tmp_path / "good.jsonl", [line("pipeline_run", lane="public", status="ok")])
    log = tmp_path / "garbage.jsonl.gz"
    log.write_bytes(BAD_HEADER)
    page = tmp_path / "report.html"
    to_page: list[str | Path] = ["--html", page] if html else []

    done = _run("report", good, log, *to_page)

    assert done.exit_code == 2, done.output
    assert done.stdout == ""  # not one chart: they would hide that a log was lost
    errors = [text for text in done.stderr.splitlines() if text.startswith("Error:")]
    assert errors == [f"Error: {log}: no record of it could be read, so no chart is drawn"]
    assert f"{log}: the gzip stream breaks off (cut short or corrupt) at record 1" in done.stderr
    assert not page.exists()


def test_a_truncated_line_is_counted_on_stderr_and_its_values_never_shown(
    tmp_path: Path,
) -> None:
    cut_line = line("pipeline_run", lane=SECRET_LANE, status="ok")[:-20]
    log = write_lines(
        tmp_path / "service.jsonl", [line("pipeline_run", lane="public", status="ok"), cut_line]
    )

    done = _run("report", log)

    assert done.exit_code == 0, done.output
    assert RUN_ROW.format(1) in done.stdout.splitlines()
    table = [text for text in done.stderr.splitlines() if text.startswith("│")]
    assert table == [
        f"│ {log} │       2 │         1 │             0 │         1 │",
    ], done.stderr
    assert SECRET_LANE not in done.output


def test_a_log_without_telemetry_warns_and_exits_1_as_preview_does(tmp_path: Path) -> None:
    log = write_lines(tmp_path / "plain.log", ["service started", "listening on :8080"])
    shown = _run("preview", log)
    assert shown.exit_code == 1, shown.output

    done = _run("report", log)

    assert done.exit_code == 1, done.output
    assert done.stderr.splitlines()[-1] == shown.stdout.splitlines()[-1]
    assert done.stderr.splitlines()[-1] == "warning: no telemetry lines found"


def test_a_clean_log_prints_nothing_on_stderr(tmp_path: Path) -> None:
    # Plain text beside the telemetry is a service's own log lines: nothing went wrong.
    log = write_lines(
        tmp_path / "mixed.jsonl", ["service started", line("chat_turn", tier="public")]
    )
    done = _run("report", log)
    assert done.exit_code == 0, done.output
    assert done.stderr == ""


def _undecodable(folder: Path) -> list[Path]:
    log = write_lines(folder / "bytes.jsonl", [line("chat_turn", tier="public")])
    log.write_bytes(log.read_bytes() + b'{"event": "\xff\xfe"}\n')
    return [log]


def _named_twice(folder: Path) -> list[Path]:
    log = write_lines(folder / "twice.jsonl", [line("chat_turn", tier="public")])
    return [log, log]


def _conflicting(folder: Path) -> list[Path]:
    copies = [
        orjson.dumps(entry("pipeline_run", insert_id="d1", lane="public", status=status))
        for status in ("ok", "failed")
    ]
    return [write_lines(folder / "copies.jsonl", [copy.decode() for copy in copies])]


@pytest.mark.parametrize(
    ("logs", "note"),
    [
        (_undecodable, "warning: 1 record(s) oversized, too deep or undecodable were skipped"),
        (_named_twice, "warning: "),
        (_conflicting, "conflicting: 1 copies of LogEntries hold another payload"),
    ],
    ids=["undecodable", "named twice", "conflicting copies"],
)
def test_what_else_the_load_warns_of_is_told_too(
    tmp_path: Path, logs: Callable[[Path], list[Path]], note: str
) -> None:
    given = logs(tmp_path)
    shown = _run("preview", *given)
    assert any(text.startswith(note) for text in _notes(shown)), shown.stdout

    done = _run("report", *given)

    assert done.exit_code == 0, done.output
    assert [text for text in done.stderr.splitlines() if text.startswith(note)] == [
        text for text in _notes(shown) if text.startswith(note)
    ]


def test_every_log_of_which_nothing_was_read_is_named_in_the_error(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for log in (first, second):
        log.write_bytes(BAD_HEADER)

    done = _run("report", first, second)

    assert done.exit_code == 2, done.output
    errors = [text for text in done.stderr.splitlines() if text.startswith("Error:")]
    assert errors == [
        f"Error: {first}, {second}: no record of it could be read, so no chart is drawn"
    ]
