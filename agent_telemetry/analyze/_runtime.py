"""GoogleSQL's analyzer as a local service: PyPI ``zetasql==0.1.5``, a WASM build of ZetaSQL
run by wasmtime. Everything that depends on zetasql's internals is in this module.

We use two things of zetasql: ``zetasql.wasm`` (its exported C functions: ``wasm_malloc``,
``wasm_free``, ``ZetaSqlLocalService_<Method>`` taking and returning serialized protobuf,
``wasm_get_last_error``) and the generated protobuf modules (``zetasql.wasi._pb2``). Not its
Python client (``zetasql.core``), for three reasons:

1. Start-up. The client compiles the 28 MB module on every process start (37-48 s of CPU
   on one core). Here the compiled module is serialized once (``Module.serialize``,
   written atomically) and later loaded with ``Module.deserialize_file`` (an mmap: about
   0.1 s). The file is keyed by the wasm's sha256, the wasmtime version and the platform;
   wasmtime itself refuses an artifact built by another engine configuration, and then
   we compile again. Directory: ``$AGENT_TELEMETRY_ZETASQL_CACHE``, else
   ``$XDG_CACHE_HOME/agent-telemetry/zetasql``, else ``~/.cache/agent-telemetry/zetasql``.
   Loading a compiled module runs its code, so a file not owned by the current user, or
   writable by others, is never loaded. Importing ``zetasql.core`` also costs 3.3 s (it
   builds a dataclass model of every protobuf message).
2. Memory copies: the client copies requests and responses into and out of the WASM
   memory one byte per Python loop iteration (the resolved AST of ``telemetry_quality``
   is hundreds of kilobytes); here ``ctypes.memmove``.
3. Responses: the client converts each one into its dataclass models (about 1.5 s for a
   large resolved AST); here they stay protobuf messages.

``_Client`` below speaks the module's calling convention exactly as
``zetasql.core.wasm_client.WasmClient._call_grpc_method`` does in 0.1.5. zetasql is pinned
(the ``[analyze]`` extra: ``zetasql==0.1.5``); another version, or a missing export, raises
``AnalyzerUnavailable`` at start, never a silent misbehaviour.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import os
import platform
import re
import sys
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, TypeVar

from agent_telemetry._files import write_bytes
from agent_telemetry.analyze._errors import INSTALL_HINT, AnalyzerUnavailable
from agent_telemetry.errors import AgentTelemetryError, FileRefusedError

try:
    import wasmtime
    from zetasql.__version__ import __version__ as _zetasql_version
    from zetasql.wasi import get_wasm_path
    from zetasql.wasi._pb2.zetasql.local_service import local_service_pb2 as local_service
    from zetasql.wasi._pb2.zetasql.proto import options_pb2 as analyzer_options
    from zetasql.wasi._pb2.zetasql.proto import simple_catalog_pb2 as simple_catalog
    from zetasql.wasi._pb2.zetasql.public import options_pb2 as language
    from zetasql.wasi._pb2.zetasql.public import parse_resume_location_pb2 as resume
    from zetasql.wasi._pb2.zetasql.public import simple_table_pb2 as simple_table
    from zetasql.wasi._pb2.zetasql.public import type_pb2 as types
    from zetasql.wasi._pb2.zetasql.public import value_pb2 as values
    from zetasql.wasi._pb2.zetasql.resolved_ast import resolved_node_kind_pb2 as node_kind
except ImportError as exc:  # the extra is not installed (or one of its wheels is broken)
    missing = (exc.name or "zetasql").partition(".")[0]
    raise AnalyzerUnavailable(
        f"GoogleSQL's analyzer needs the [analyze] extra ({missing} is missing): {INSTALL_HINT}"
    ) from None

__all__ = [
    "CACHE_ENV",
    "ZETASQL_VERSION",
    "AnalyzerServerError",
    "CacheInfo",
    "CompileNotice",
    "NoResponse",
    "Runtime",
    "analyzer_options",
    "cache_dir",
    "language",
    "local_service",
    "node_kind",
    "resume",
    "runtime",
    "simple_catalog",
    "simple_table",
    "types",
    "values",
]

ZETASQL_VERSION = "0.1.5"
CACHE_ENV = "AGENT_TELEMETRY_ZETASQL_CACHE"

# The module's exports this client calls.
_EXPORTS = (
    "memory",
    "wasm_malloc",
    "wasm_free",
    "wasm_get_last_error",
    "wasm_get_last_error_size",
)
_METHODS = ("Analyze", "GetLanguageOptions", "RegisterCatalog", "UnregisterCatalog")
# GoogleSQL's reference implementation (``_evaluate``): looked up when first called.
_EVALUATE_METHODS = ("EvaluateQuery", "UnprepareQuery")
_SIZE_T = 4  # wasm32
_NULL = 0

Message = TypeVar("Message")


class NoResponse:
    """The response type of methods that answer nothing (an empty message)."""

    @classmethod
    def FromString(cls, data: bytes) -> NoResponse:  # protobuf's spelling
        return cls()


class AnalyzerServerError(AgentTelemetryError):
    """The service answered with an error status; ``message`` is its whole text
    (``Code: N, Message: ...``: the message may span lines, such as the signatures a
    call did not match)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


_RAW_ERROR = re.compile(r"Code: (\d+), Message: (.*)", re.DOTALL)


def _check_pinned() -> None:
    if _zetasql_version != ZETASQL_VERSION:
        raise AnalyzerUnavailable(
            f"zetasql {_zetasql_version} is installed; agent-telemetry's analyzer is written "
            f"against zetasql=={ZETASQL_VERSION}: {INSTALL_HINT}"
        )


def cache_dir() -> Path:
    """Where compiled modules are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-telemetry" / "zetasql"


def _sha256(path: Path, directory: Path) -> str:
    """The wasm's sha256, remembered per (path, size, mtime) so a warm start does not hash
    28 MB again."""
    stat = path.stat()
    ident = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    stamp = directory / "wasm.sha256"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        lines = stamp.read_text(encoding="utf-8").splitlines()
        if len(lines) == 2 and lines[0] == ident and re.fullmatch(r"[0-9a-f]{64}", lines[1]):
            return lines[1]
    digest = hashlib.sha256()
    with path.open("rb") as wasm:
        for chunk in iter(lambda: wasm.read(1 << 20), b""):
            digest.update(chunk)
    sha = digest.hexdigest()
    with contextlib.suppress(OSError, FileRefusedError):
        _write_atomically(directory, stamp, f"{ident}\n{sha}\n".encode())
    return sha


def _write_atomically(directory: Path, target: Path, data: bytes | bytearray) -> None:
    """Concurrent starts never see half a file (the file door: 0600, a link refused)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_bytes(target, data, directory, private=True)


def _trusted(path: Path) -> bool:
    """Only our own files, not writable by group or others (POSIX), are loaded as code."""
    if not hasattr(os, "getuid"):
        return True
    stat = path.stat()
    return stat.st_uid == os.getuid() and not stat.st_mode & 0o022


def _zoneinfo() -> str | None:
    """tzdata's zoneinfo folder (a zetasql dependency), for time zone names in SQL."""
    try:
        import tzdata
    except ImportError:
        return None
    folder = Path(tzdata.__file__).parent / "zoneinfo"
    return str(folder) if folder.is_dir() else None


def _version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """How the compiled module was obtained: loaded from ``path`` (``hit``) or compiled
    (and ``written`` there); ``seconds`` to a running instance."""

    path: Path
    hit: bool
    written: bool
    seconds: float


class CompileNotice(Protocol):
    """Told when the analyzer must be compiled (``seconds`` None, before it starts) and
    when that is done (``seconds`` it took): a first start is otherwise silent for a
    minute."""

    def __call__(self, seconds: float | None, path: Path) -> None: ...


def _load_module(
    engine: wasmtime.Engine, wasm: Path, directory: Path, notice: CompileNotice | None = None
) -> tuple[Any, Path, bool, bool]:
    key = hashlib.sha256(
        "|".join(
            (
                _sha256(wasm, directory),
                f"wasmtime={_version('wasmtime')}",
                f"zetasql={ZETASQL_VERSION}",
                sys.platform,
                platform.machine(),
            )
        ).encode()
    ).hexdigest()[:24]
    compiled = directory / f"zetasql-{key}.cwasm"
    if compiled.is_file() and _trusted(compiled):
        with contextlib.suppress(wasmtime.WasmtimeError):  # another engine's build: compile
            return wasmtime.Module.deserialize_file(engine, str(compiled)), compiled, True, False
    if notice is not None:
        notice(None, compiled)
    started = time.perf_counter()
    module = wasmtime.Module.from_file(engine, str(wasm))
    try:
        _write_atomically(directory, compiled, module.serialize())
    except (OSError, FileRefusedError):  # a read-only home: slow next time, still works
        written = False
    else:
        written = True
    if notice is not None:
        notice(time.perf_counter() - started, compiled)
    return module, compiled, False, written


class _Client:
    """An instance of zetasql.wasm and its calling convention (see the module docstring)."""

    def __init__(self, wasm: Path, directory: Path, notice: CompileNotice | None = None) -> None:
        started = time.perf_counter()
        wasi = wasmtime.WasiConfig()
        wasi.inherit_stdout()
        wasi.inherit_stderr()
        if zoneinfo := _zoneinfo():
            wasi.preopen_dir(zoneinfo, "/usr/share/zoneinfo")
        config = wasmtime.Config()
        config.shared_memory = True  # the module imports a shared memory
        engine = wasmtime.Engine(config)
        module, path, hit, written = _load_module(engine, wasm, directory, notice)
        self._store = wasmtime.Store(engine)
        self._store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        self._exports = linker.instantiate(self._store, module).exports(self._store)
        wanted = (*_EXPORTS, *(f"ZetaSqlLocalService_{m}" for m in _METHODS))
        absent = [name for name in wanted if name not in self._exports]
        memory = self._exports.get("memory")
        if absent or not isinstance(memory, wasmtime.SharedMemory):
            raise AnalyzerUnavailable(
                f"zetasql.wasm does not export what zetasql {ZETASQL_VERSION} did "
                f"({', '.join(absent) or 'a shared memory'}); {INSTALL_HINT}"
            )
        self._memory: wasmtime.SharedMemory = memory
        if "_initialize" in self._exports:
            self._function("_initialize")()
        self.cache = CacheInfo(path, hit, written, time.perf_counter() - started)

    def _function(self, name: str) -> Any:
        function = self._exports.get(name)
        if not isinstance(function, wasmtime.Func):
            raise AnalyzerUnavailable(f"zetasql.wasm's {name} is not a function; {INSTALL_HINT}")
        return lambda *args: function(self._store, *args)

    def _address(self, pointer: int, size: int) -> int:
        if pointer <= _NULL or size < 0 or pointer + size > self._memory.data_len():
            raise AnalyzerUnavailable("zetasql.wasm returned a pointer outside its memory")
        return ctypes.addressof(self._memory.data_ptr().contents) + pointer

    def _write(self, pointer: int, data: bytes) -> None:
        ctypes.memmove(self._address(pointer, len(data)), data, len(data))

    def _read(self, pointer: int, size: int) -> bytes:
        return ctypes.string_at(self._address(pointer, size), size)

    def call(self, method: str, request: bytes) -> bytes:
        """``ZetaSqlLocalService_<method>``: serialized request in, serialized response out;
        an error status raises ``AnalyzerServerError``."""
        malloc, free = self._function("wasm_malloc"), self._function("wasm_free")
        request_pointer = malloc(max(len(request), 1))
        size_pointer = malloc(_SIZE_T)
        try:
            self._write(request_pointer, request)
            response_pointer = self._function(f"ZetaSqlLocalService_{method}")(
                request_pointer, len(request), size_pointer
            )
            if response_pointer == _NULL:
                raise self._last_error()
            size = int.from_bytes(self._read(size_pointer, _SIZE_T), "little")
            try:
                return self._read(response_pointer, size) if size else b""
            finally:
                free(response_pointer)
        finally:
            free(request_pointer)
            free(size_pointer)

    def _last_error(self) -> AnalyzerServerError:
        size = self._function("wasm_get_last_error_size")()
        raw = ""
        if size:
            raw = self._read(self._function("wasm_get_last_error")(), size).decode(
                "utf-8", "replace"
            )
        match = _RAW_ERROR.match(raw)
        if match is None:
            return AnalyzerServerError(2, raw)
        return AnalyzerServerError(int(match[1]), match[2])


class Runtime:
    """One running analyzer service (a WASM instance: one thread at a time)."""

    def __init__(self, directory: Path | None = None, notice: CompileNotice | None = None) -> None:
        _check_pinned()
        self._client: _Client | None = _Client(
            Path(get_wasm_path()), directory or cache_dir(), notice
        )
        self.cache: CacheInfo = self._client.cache

    def close(self) -> None:
        """Free the instance now (left to interpreter shutdown, wasmtime's finalizers run
        after its own module is torn down and print ignored exceptions)."""
        self._client = None

    def call(self, method: str, request: Any, response_type: type[Message]) -> Message:
        """``ZetaSqlLocalService_<method>`` with a protobuf request; the parsed response.
        (``UnregisterCatalog`` answers ``google.protobuf.Empty``: ask for ``NoResponse``.)"""
        if method not in _METHODS + _EVALUATE_METHODS:
            raise ValueError(f"not a method this client checked at start: {method}")
        if self._client is None:
            raise AnalyzerUnavailable("the analyzer was closed")
        raw = self._client.call(method, request.SerializeToString())
        parse: Any = getattr(response_type, "FromString")  # noqa: B009  # protobuf classmethod
        response: Message = parse(raw)
        return response


_STARTED: list[Runtime] = []


def runtime(notice: CompileNotice | None = None) -> Runtime:
    """The process's analyzer service, started on first use (``notice`` is told if that
    start compiles), closed at exit."""
    if not _STARTED:
        service = Runtime(notice=notice)
        atexit.register(service.close)
        _STARTED.append(service)
    return _STARTED[0]
