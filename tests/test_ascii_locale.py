"""The files a user writes are read as UTF-8 whatever the machine's locale: a CI runner
or a container with ``LC_ALL=C`` runs the same commands on the same files as a laptop.

Each test runs the real command in a process under the C locale (Python's UTF-8 mode
off, so the locale's encoding is ASCII), and the same reading in this process too: under
``make mutation`` the test runs for the reading's mutants, and the child inherits the
mutant from the environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agent_telemetry
from agent_telemetry._loader import CatalogueLoadError, guarded, import_catalogue
from agent_telemetry.config import load_config

ROOT = Path(agent_telemetry.__file__).resolve().parents[1]

# The child checks its locale really is ASCII, then runs the command line.
_COMMAND = (
    "import codecs, locale, sys\n"
    "encoding = codecs.lookup(locale.getpreferredencoding(False)).name\n"
    "assert encoding == 'ascii', encoding\n"
    "from agent_telemetry._entry import main\n"
    "sys.argv[0] = 'agent-telemetry'\n"
    "main()\n"
)

TARGETS = """\
[source]
project = "acme-agents-prod"
dataset = "agent_logs"

[target]
project = "acme-agents-prod"
dataset = "agent_telemetry"
"""


def _under_ascii_locale(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,  # under mutmut, it names the mutant the child runs
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONCOERCECLOCALE": "0",
        "PYTHONUTF8": "0",
        "PYTHONIOENCODING": "",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-X", "utf8=0", "-c", _COMMAND, *args],
        env=env,
        cwd=folder,
        capture_output=True,
        check=False,
        timeout=120,
    )


def test_a_deployment_file_with_non_ascii_text_is_read_under_an_ascii_locale(
    tmp_path: Path,
) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text("# \u00c9quipe donn\u00e9es: the views Zo\u00eb reviews\n" + TARGETS, "utf-8")
    assert load_config(config).target.dataset == "agent_telemetry"
    done = _under_ascii_locale(tmp_path, "sink-schema", "--config", str(config))
    assert done.returncode == 0, done.stderr.decode("utf-8", "backslashreplace")
    assert "jsonPayload" in {field["name"] for field in json.loads(done.stdout)}


# A model pydantic cannot build (a float bound on a strict int), named in French.
UNBUILDABLE = """\
from pydantic import BaseModel, Field


class \u00c9v\u00e9nement(BaseModel):
    count: int = Field(ge=0, le=5.9, strict=True)
"""
MODULE = "ascii_locale_events"


@pytest.fixture
def catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder whose telemetry.toml names a catalogue module that does not load."""
    (tmp_path / f"{MODULE}.py").write_text(UNBUILDABLE, encoding="utf-8")
    (tmp_path / "telemetry.toml").write_text(
        f'[catalogue]\nmodule = "{MODULE}"\nlock = "schema.lock.json"\n\n' + TARGETS, "utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    yield tmp_path
    sys.modules.pop(MODULE, None)


def test_a_non_ascii_class_pydantic_cannot_build_is_named_under_an_ascii_locale(
    catalogue: Path,
) -> None:
    named = f"{MODULE}.py:4 (class \u00c9v\u00e9nement: pydantic cannot build it)"
    with pytest.raises(CatalogueLoadError) as caught, guarded(MODULE):
        import_catalogue(MODULE)
    assert named in str(caught.value)
    done = _under_ascii_locale(catalogue, "events", "--config", "telemetry.toml")
    shown = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2, shown
    assert named in shown
