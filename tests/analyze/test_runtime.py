"""The analyzer's runtime: our client of zetasql.wasm's calling convention, the compiled-
module cache, and the loud failures when zetasql is not the release it was written for.

Most tests run a tiny stand-in module (WebAssembly text below) with the same exports, so
they take milliseconds, not the minute a cold compile of zetasql.wasm costs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime

from agent_telemetry.analyze import AnalyzerUnavailable
from agent_telemetry.analyze import _runtime as rt
from tests.conftest import REPO

ERROR = "Code: 3, Message: Unrecognized name: x\\n  detail [at 1:8]"
STAND_IN = f"""
(module
  (memory (export "memory") 1 1 shared)
  (data (i32.const 64) "{ERROR}")
  (data (i32.const 512) "response")
  (global $next (mut i32) (i32.const 1024))
  (func (export "wasm_malloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (i32.add (local.get $n) (i32.const 8))))
    (local.get $p))
  (func (export "wasm_free") (param i32))
  (func (export "wasm_get_last_error_size") (result i32) (i32.const {len(ERROR) - 1}))
  (func (export "wasm_get_last_error") (result i32) (i32.const 64))
  ;; Analyze: an error status (null response)
  (func (export "ZetaSqlLocalService_Analyze") (param i32 i32 i32) (result i32) (i32.const 0))
  ;; GetLanguageOptions: echoes the request (its pointer and length)
  (func (export "ZetaSqlLocalService_GetLanguageOptions")
    (param $request i32) (param $length i32) (param $size i32) (result i32)
    (i32.store (local.get $size) (local.get $length)) (local.get $request))
  ;; RegisterCatalog: a response running past the end of memory
  (func (export "ZetaSqlLocalService_RegisterCatalog") (param i32 i32 i32) (result i32)
    (i32.store (local.get 2) (i32.const 16)) (i32.const 65530))
  (func (export "ZetaSqlLocalService_UnregisterCatalog") (param i32 i32 i32) (result i32)
    (i32.store (local.get 2) (i32.const 8)) (i32.const 512))
)
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    wasm = tmp_path / "stand-in.wasm"
    wasm.write_bytes(wasmtime.wat2wasm(STAND_IN))
    return wasm


def test_a_request_and_its_response_cross_the_memory_intact(stand_in: Path, tmp_path: Path) -> None:
    client = rt._Client(stand_in, tmp_path / "cache")
    request = bytes(range(256)) * 40  # 10 KB, every byte value
    assert client.call("GetLanguageOptions", request) == request
    assert client.call("UnregisterCatalog", b"") == b"response"


def test_an_error_status_carries_the_whole_multi_line_message(
    stand_in: Path, tmp_path: Path
) -> None:
    client = rt._Client(stand_in, tmp_path / "cache")
    with pytest.raises(rt.AnalyzerServerError) as caught:
        client.call("Analyze", b"x")
    assert caught.value.code == 3
    assert caught.value.message == "Unrecognized name: x\n  detail [at 1:8]"


def test_a_response_outside_the_memory_fails_loudly(stand_in: Path, tmp_path: Path) -> None:
    client = rt._Client(stand_in, tmp_path / "cache")
    with pytest.raises(AnalyzerUnavailable, match="pointer outside its memory"):
        client.call("RegisterCatalog", b"x")


def test_the_compiled_module_is_cached_and_loaded_on_the_next_start(
    stand_in: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = rt._Client(stand_in, cache).cache
    assert (first.hit, first.written) == (False, True)
    assert first.path.parent == cache
    assert first.path.is_file()
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)
    second = rt._Client(stand_in, cache).cache
    assert (second.hit, second.written, second.path) == (True, False, first.path)


def test_a_start_that_compiles_says_so_before_and_after_and_a_cached_one_is_silent(
    stand_in: Path, tmp_path: Path
) -> None:
    """The first start compiles (about a minute for zetasql.wasm): the notice is told
    before it starts and when it is done, with the time it took; a cache hit tells nothing."""
    told: list[tuple[float | None, Path]] = []

    def notice(seconds: float | None, path: Path) -> None:
        told.append((seconds, path))

    first = rt._Client(stand_in, tmp_path / "cache", notice).cache
    assert [seconds is None for seconds, _ in told] == [True, False]
    assert all(path == first.path for _, path in told)
    assert told[1][0] is not None
    assert 0 <= told[1][0] <= first.seconds
    told.clear()
    rt._Client(stand_in, tmp_path / "cache", notice)
    assert told == []


def test_the_evaluation_methods_of_a_module_without_them_fail_loudly(
    stand_in: Path, tmp_path: Path
) -> None:
    client = rt._Client(stand_in, tmp_path / "cache")
    with pytest.raises(AnalyzerUnavailable, match="EvaluateQuery is not a function"):
        client.call("EvaluateQuery", b"x")


def test_another_module_gets_another_cache_file(stand_in: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = rt._Client(stand_in, cache).cache
    stand_in.write_bytes(wasmtime.wat2wasm(STAND_IN.replace('"response"', '"other"')))
    second = rt._Client(stand_in, cache).cache
    assert second.path != first.path
    assert not second.hit


def test_a_cache_file_others_can_write_is_never_loaded(stand_in: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = rt._Client(stand_in, cache).cache.path
    path.chmod(0o666)
    again = rt._Client(stand_in, cache).cache
    assert not again.hit  # compiled anew, and written back privately
    assert path.stat().st_mode & 0o077 == 0


def test_a_damaged_cache_file_is_compiled_again(stand_in: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = rt._Client(stand_in, cache).cache.path
    path.write_bytes(b"not a compiled module")
    path.chmod(0o600)
    again = rt._Client(stand_in, cache).cache
    assert (again.hit, again.written) == (False, True)


def test_a_module_without_the_expected_exports_fails_loudly(tmp_path: Path) -> None:
    wasm = tmp_path / "other.wasm"
    wasm.write_bytes(wasmtime.wat2wasm('(module (memory (export "memory") 1 1 shared))'))
    with pytest.raises(AnalyzerUnavailable, match=r"does not export what zetasql 0\.1\.5 did"):
        rt._Client(wasm, tmp_path / "cache")


def test_another_zetasql_release_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rt, "_zetasql_version", "0.2.0")
    with pytest.raises(AnalyzerUnavailable, match=r"zetasql 0\.2\.0 is installed.*==0\.1\.5"):
        rt.Runtime()


def test_the_cache_directory_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(rt.CACHE_ENV, str(tmp_path / "mine"))
    assert rt.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(rt.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert rt.cache_dir() == tmp_path / "xdg" / "agent-telemetry" / "zetasql"


def test_a_new_process_starts_the_real_analyzer_from_the_cache(
    analyzer_runtime: rt.Runtime,
) -> None:
    """After the session's start, another process loads the compiled zetasql.wasm."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from agent_telemetry.analyze import runtime\n"
        "c = runtime().cache\n"
        "print(c.hit, c.path, f'{time.perf_counter() - t:.2f}')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=600,
        check=True,
    )
    hit, path, seconds = result.stdout.split()
    assert (hit, path) == ("True", str(analyzer_runtime.cache.path))
    print(f"\nwarm start in a new process: {seconds} s")
