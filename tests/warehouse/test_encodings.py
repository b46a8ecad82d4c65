"""UTF-8, UTF-16 and UTF-32 with a byte-order mark are read (gzipped too); anything else
that is not UTF-8 text is a one-line error naming the file and what it looks like."""

from __future__ import annotations

import codecs
import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import LoadError, Warehouse, check_logs
from agent_telemetry.warehouse._reading.source import guess_wide_encoding
from tests.warehouse.lines import entry, line

BOMS = {
    "utf-8": codecs.BOM_UTF8,
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "utf-32-le": codecs.BOM_UTF32_LE,
    "utf-32-be": codecs.BOM_UTF32_BE,
}
WIDE = {"COLUMNS": "300"}


def _emitter_text(count: int = 8) -> str:
    lines = [
        line("pipeline_run", lane="public", status="ok", queue_wait_ms=n) for n in range(count)
    ]
    return "".join(f"{text}\r\n" for text in lines)  # CRLF, as Windows tools write


def _counts(path: Path) -> tuple[tuple[int, int, int, str], tuple[int, int, int, str]]:
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    return (
        (loaded.records, loaded.loaded, loaded.truncated, loaded.encoding),
        (checked.records, checked.telemetry, checked.truncated, checked.encoding),
    )


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("codec", list(BOMS))
def test_a_file_with_a_byte_order_mark_reads_like_utf8(
    tmp_path: Path, codec: str, gz: bool
) -> None:
    data = BOMS[codec] + _emitter_text().encode(codec)
    path = tmp_path / "telemetry.jsonl"
    path.write_bytes(gzip.compress(data) if gz else data)
    loaded, checked = _counts(path)
    # Every record, the first one too (a BOM must not hide it), none truncated.
    assert loaded == checked == (8, 8, 0, f"{codec} (BOM)")


def test_a_bom_prefixed_gcloud_array_is_read_as_an_array(tmp_path: Path) -> None:
    entries = [entry("chat_turn", tier="public", kind="text") for _ in range(5)]
    path = tmp_path / "export.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(entries, indent=2).encode())
    report = check_logs([path])
    (checked,) = report.files
    assert (checked.layout, checked.records, checked.telemetry, checked.truncated) == (
        "array",
        5,
        5,
        0,
    )


def test_powershell_output_reads_utf16_with_crlf(tmp_path: Path) -> None:
    # gcloud logging read ... --format=json > export.json in Windows PowerShell 5.1
    entries = [entry("pipeline_run", lane="admin", status="ok") for _ in range(4)]
    text = json.dumps(entries, indent=2).replace("\n", "\r\n")
    path = tmp_path / "export.json"
    path.write_bytes(text.encode("utf-16"))  # Python writes the BOM, little-endian here
    result = CliRunner().invoke(main, ["preview", str(path)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "utf-16-le (BOM)" in result.output
    assert "pipeline_run: 4 rows" in result.output


def test_undecodable_utf16_is_counted_per_record(tmp_path: Path) -> None:
    good = line("pipeline_run", lane="public", status="ok")
    bad = good.replace("public", "pub\ud800lic")  # a lone surrogate, as UTF-16 code units
    data = codecs.BOM_UTF16_LE + f"{good}\n{bad}\n{good}\n".encode("utf-16-le", "surrogatepass")
    path = tmp_path / "odd.jsonl"
    path.write_bytes(data + b"\x00")  # and a stray byte at the end
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    assert (loaded.loaded, loaded.undecodable) == (checked.telemetry, checked.undecodable) == (2, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_emitter_text().encode("utf-16-le"), "looks like UTF-16LE text without a byte-order mark"),
        (_emitter_text().encode("utf-16-be"), "looks like UTF-16BE text without a byte-order mark"),
        (_emitter_text().encode("utf-32-le"), "looks like UTF-32LE text without a byte-order mark"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary data (NUL bytes)"),
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 40, "zstd-compressed; decompress it first"),
        (gzip.compress(_emitter_text().encode("utf-16-le")), "looks like UTF-16LE text"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-le", "png", "zstd", "gzipped-utf-16"],
)
@pytest.mark.parametrize("command", ["preview", "check-logs"])
def test_text_without_a_bom_or_binary_is_a_one_line_error(
    tmp_path: Path, data: bytes, message: str, command: str
) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(data)
    result = CliRunner().invoke(main, [command, str(path)], env=WIDE)
    assert result.exit_code == 2  # an error, not a violation
    assert result.output.count("\n") == 1, result.output  # one line, no report
    assert result.output.startswith(f"Error: {path}: ")
    assert message in result.output
    assert "non-telemetry" not in result.output
    with pytest.raises(LoadError, match=re.escape(message)):
        check_logs([path])


def test_the_wide_encodings_are_told_apart_by_where_their_nul_bytes_fall() -> None:
    text = '{"event": "chat_turn"}\n' * 20
    assert guess_wide_encoding(text.encode("utf-16-le")) == "UTF-16LE"
    assert guess_wide_encoding(text.encode("utf-16-be")) == "UTF-16BE"
    assert guess_wide_encoding(text.encode("utf-32-le")) == "UTF-32LE"
    assert guess_wide_encoding(text.encode("utf-32-be")) == "UTF-32BE"
    assert guess_wide_encoding(bytes(range(256)) * 4) is None
