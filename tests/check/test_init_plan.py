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


CHECK = "`agent-telemetry check`"
TO_EDIT = (
    "set the [source] and [target] project and dataset in telemetry.toml, run "
    f"`agent-telemetry views build` (the views name them), commit everything and run {CHECK}"
)
ADD_CONFIGURE = 'add `configure(catalogue="shop.telemetry")` where shop starts; '
PYTEST_PATH = (
    'make sure pytest imports the package (`pythonpath = ["."]` in [tool.pytest.ini_options]); '
)


@pytest.mark.parametrize(
    ("kept", "where", "line"),
    [
        ((), None, f"next: {TO_EDIT}"),
        ((), ("acme-shop-prod", "shop_logs"), f"next: commit everything and run {CHECK}"),
        (("shop/__init__.py",), None, f"next: {ADD_CONFIGURE}{TO_EDIT}"),
        (("pyproject.toml",), None, f"next: {PYTEST_PATH}{TO_EDIT}"),
        (
            ("shop/__init__.py", "pyproject.toml"),
            ("acme-shop-prod", "shop_logs"),
            f"next: {ADD_CONFIGURE}{PYTEST_PATH}commit everything and run {CHECK}",
        ),
    ],
    ids=["fresh", "placed", "kept_init", "kept_pyproject", "both_kept_placed"],
)
def test_the_next_step_line_says_what_is_left_to_do(
    tmp_path: Path, kept: tuple[str, ...], where: tuple[str, str] | None, line: str
) -> None:
    for name in kept:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# the service's own\n")
    project, dataset = where or (None, None)
    planned = plan(tmp_path, "shop", project=project, dataset=dataset)
    assert planned.next_steps() == line
    assert planned.kept == tuple(tmp_path / name for name in kept)


@pytest.mark.parametrize(
    ("project", "dataset", "source"),
    [
        (None, None, ("my-gcp-project", "service_logs")),
        ("acme-shop-prod", None, ("acme-shop-prod", "service_logs")),
        (None, "shop_logs", ("my-gcp-project", "shop_logs")),
        ("acme-shop-prod", "shop_logs", ("acme-shop-prod", "shop_logs")),
    ],
    ids=["neither", "project_only", "dataset_only", "both"],
)
def test_the_source_given_goes_into_telemetry_toml_and_only_both_need_no_edit(
    tmp_path: Path, project: str | None, dataset: str | None, source: tuple[str, str]
) -> None:
    planned = plan(tmp_path, "shop", project=project, dataset=dataset)
    toml = planned.files[tmp_path / "telemetry.toml"]
    source_table = toml.split("[source]\n")[1].split("\n\n")[0]
    assert source_table == (
        f'project = "{source[0]}"\ndataset = "{source[1]}"\nlayout = "partitioned"'
    )
    target_table = toml.split("[target]\n")[1]
    assert target_table == f'project = "{source[0]}"\ndataset = "shop_telemetry"\n'
    placed = project is not None and dataset is not None
    assert planned.placed is placed
    edit = "replace with your own, then run\n# `agent-telemetry views build`"
    assert (edit in toml) is not placed
    assert ("([source]) and where the views go ([target])." in toml) is placed


@pytest.mark.parametrize(
    ("project", "dataset", "message"),
    [
        (
            "SECRET-project",
            None,
            "--project: not a Google Cloud project id: 6-30 lowercase letters, digits or "
            "hyphens, starting with a letter (optionally 'domain:' first)",
        ),
        (
            None,
            "SECRET-dataset",
            "--dataset: not a BigQuery name: letters, digits and underscores, at most 1024",
        ),
        (
            "acme-shop-prod",
            "SECRET-dataset",
            "--dataset: not a BigQuery name: letters, digits and underscores, at most 1024",
        ),
        # A dataset name that is a fine project id, and the reverse: each is checked by
        # its own rule.
        (
            "shop_logs",
            "acme-shop-prod",
            "--project: not a Google Cloud project id: 6-30 "
            "lowercase letters, digits or hyphens, starting with a letter (optionally "
            "'domain:' first)",
        ),
    ],
)
def test_a_bad_source_is_refused_by_option_and_rule_never_by_value(
    tmp_path: Path, project: str | None, dataset: str | None, message: str
) -> None:
    with pytest.raises(InitError) as caught:
        plan(tmp_path, "shop", project=project, dataset=dataset)
    assert str(caught.value) == message
    assert list(tmp_path.iterdir()) == []


def test_the_pyproject_names_the_package(tmp_path: Path) -> None:
    text = plan(tmp_path, "shop").files[tmp_path / "pyproject.toml"]
    assert text.startswith('[project]\nname = "shop"\n')


@pytest.mark.parametrize("points_to", ["folder", "file"])
def test_a_linked_views_folder_refuses_the_whole_run(tmp_path: Path, points_to: str) -> None:
    outside = tmp_path / "outside"
    repo = tmp_path / "repo"
    (repo / "telemetry").mkdir(parents=True)
    if points_to == "folder":
        outside.mkdir()
    else:
        outside.write_text("not yours")
    (repo / "telemetry" / "views").symlink_to(outside)
    with pytest.raises(FileRefusedError) as caught:
        plan(repo, "shop")
    assert str(caught.value).startswith(f"{repo}/telemetry/views: is a symbolic link")
    assert sorted(p.name for p in repo.iterdir()) == ["telemetry"]
