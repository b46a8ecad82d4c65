"""check-logs on a gzip stream that is cut off or corrupt: counted, never `Aborted!`."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import check_logs
from tests.warehouse.broken_input import BAD_HEADER, fifo_with, half_gzip
from tests.warehouse.lines import line


def _run(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check-logs", str(path)], terminal_width=200)
    return result.exit_code, result.output


def test_check_logs_counts_a_cut_off_gzip_as_truncated_at_its_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(path, on_grid=True)  # every whole line valid
    code, output = _run(path)
    assert "Aborted" not in output
    assert f"1 (line {whole + 1})" in output
    assert code == 0, output  # truncated lines are counted, never fatal
    (checked,) = check_logs([path]).files
    assert (checked.records, checked.truncated, checked.truncated_at) == (whole + 1, 1, [whole + 1])
    assert check_logs([path]).events["pipeline_run"].valid == whole


def test_check_logs_counts_a_gzip_with_a_bad_header_as_one_truncated_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(BAD_HEADER)
    code, output = _run(path)
    assert "Aborted" not in output
    assert "1 (line 1)" in output
    assert code == 1  # a report; no telemetry at all is never clean
    assert "warning: no telemetry lines found" in output
    (checked,) = check_logs([path]).files
    assert (checked.records, checked.truncated) == (1, 1)


def test_check_logs_reads_a_fifo_whole(tmp_path: Path) -> None:
    # Process substitution (`check-logs <(zcat x.gz)`) is a pipe that can be read once.
    lines = [line("pipeline_run", lane="public", status="ok", queue_wait_ms=n) for n in range(5)]
    data = "".join(f"{text}\n" for text in lines).encode()
    with fifo_with(tmp_path / "pipe", data) as pipe:
        report = check_logs([pipe])
    assert report.events["pipeline_run"].valid == 5
    assert report.files[0].path == str(tmp_path / "pipe")
