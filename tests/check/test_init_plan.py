"""``agent-telemetry init``'s plan called directly (``check/_init.py``): the package name
it derives from a folder, the names it refuses, what stands in its way (all of it, named),
and the files it writes (their text, new files only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_telemetry.check._init import LOCK, InitError, package_name, plan, write
from agent_telemetry.errors import FileRefusedError

NOT_A_NAME = "--package: not a lowercase Python package name (letters, digits, _)"


@pytest.mark.parametrize(
    ("folder", "package"),
    [
        ("My-Service", "my_service"),
        ("__shop__", "shop"),  # leading and trailing underscores go
        ("--a..b--", "a_b"),
        ("a_b", "a_b"),
        ("2shop", "service"),  # a digit first: not a package name
        ("x2", "x2"),  # a digit later is fine
        ("class", "service"),  # a keyword
        ("---", "service"),
        ("é", "service"),  # nothing of [a-z0-9_] left
        ("s" * 50, "s" * 40),
    ],
)
def test_the_package_is_named_after_the_folder(folder: str, package: str) -> None:
    assert package_name(Path("/repos") / folder) == package


@pytest.mark.parametrize("package", ["Shop", "os; rm", "2shop", "class", "a" * 41, "a-b"])
def test_an_unusable_package_name_is_refused_by_that_message(tmp_path: Path, package: str) -> None:
    with pytest.raises(InitError) as caught:
        plan(tmp_path, package)
    assert str(caught.value) == NOT_A_NAME


def test_the_longest_package_name_is_accepted(tmp_path: Path) -> None:
    assert plan(tmp_path, "a" * 40).package == "a" * 40


def test_the_plan_holds_the_files_and_their_text(tmp_path: Path) -> None:
    planned = plan(tmp_path, "shop")
    assert (planned.root, planned.package) == (tmp_path, "shop")
    names = sorted(p.relative_to(tmp_path).as_posix() for p in planned.files)
    assert names == [
        ".github/workflows/telemetry.yml",
        "pyproject.toml",
        "shop/__init__.py",
        "shop/telemetry.py",
        "telemetry.toml",
        "tests/test_telemetry.py",
    ]
    toml = planned.files[tmp_path / "telemetry.toml"]
    assert 'module = "shop.telemetry"' in toml
    assert f'lock = "{LOCK}"' in toml
    assert 'dataset = "shop_telemetry"' in toml
    assert planned.files[tmp_path / "shop" / "telemetry.py"].startswith(
        '"""shop\'s event catalogue'
    )
    # The package's start-up names its catalogue to the emitter; pytest imports it.
    assert (
        'configure(catalogue="shop.telemetry")' in planned.files[tmp_path / "shop" / "__init__.py"]
    )
    assert 'pythonpath = ["."]' in planned.files[tmp_path / "pyproject.toml"]
    assert "import shop" in planned.files[tmp_path / "tests" / "test_telemetry.py"]


def test_an_existing_package_init_is_kept(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("VERSION = 1\n")
    planned = plan(tmp_path, "shop")
    assert tmp_path / "shop" / "__init__.py" not in planned.files
    write(planned)
    assert (tmp_path / "shop" / "__init__.py").read_text() == "VERSION = 1\n"


@pytest.mark.parametrize("taken", [LOCK, "telemetry/views", "docs/telemetry.md", "telemetry.toml"])
def test_each_file_in_the_way_is_named(tmp_path: Path, taken: str) -> None:
    (tmp_path / taken).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / taken).write_text("mine")
    with pytest.raises(InitError) as caught:
        plan(tmp_path, "shop")
    assert str(caught.value) == (
        f"not written: {taken} already exist(s); init never overwrites a file "
        "(`agent-telemetry check` tells whether a set-up repository is current)"
    )


def test_everything_in_the_way_is_named_at_once(tmp_path: Path) -> None:
    for taken in ("telemetry.toml", "docs/telemetry.md"):
        (tmp_path / taken).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / taken).write_text("mine")
    with pytest.raises(InitError, match=r"not written: telemetry\.toml, docs/telemetry\.md "):
        plan(tmp_path, "shop")


def test_write_writes_utf8_and_never_over_a_file_made_meanwhile(tmp_path: Path) -> None:
    planned = plan(tmp_path, "shop")
    planned.files[tmp_path / "telemetry.toml"] += "# café\n"
    written = write(planned)
    assert sorted(written) == sorted(planned.files)
    assert (tmp_path / "telemetry.toml").read_bytes().endswith("# café\n".encode())
    # A file made between the plan and the write (here: by the first write) is refused
    # by name and kept; a second run never writes over one.
    (tmp_path / "telemetry.toml").write_text("mine", encoding="utf-8")
    with pytest.raises(FileRefusedError) as caught:
        write(planned)
    assert str(caught.value) == f"{tmp_path / 'telemetry.toml'}: exists; not overwritten"
    assert (tmp_path / "telemetry.toml").read_text(encoding="utf-8") == "mine"
