"""Text the package did not write reaches no terminal, CI log, Markdown or HTML live.

One table of hostile strings (``HOSTILE``), one table of places they arrive (``PLACES``:
paths, models, config, lock, query files, log content; BigQuery read-backs in
tests/deploy/bigquery/test_outside_bigquery.py), each run through the commands and
formats that print or write it. Every terminal or CI-log output must hold: no raw
control, format, separator or non-ASCII space character, no line starting with ``::``
(beyond the github format's own annotations, leading blanks included), no ``##[``, no
traceback, and rich markup in a name printed as written. Every Markdown output, rendered
by a CommonMark renderer (markdown-it-py, GitHub's dialect) and by Python-Markdown with
mkdocs.yml's extensions, must make the same elements with the hostile string as with a
plain one (no link, image, HTML or attribute from it), and a pull-request comment no
@mention outside code.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry._text import clean, github_data, markup
from agent_telemetry.cli import main
from agent_telemetry.deploy._approval import approve
from agent_telemetry.deploy._plan import DeployedView, DeploymentPlan
from agent_telemetry.deploy._plan_document import plan_document
from agent_telemetry.deploy._plan_markdown import render_markdown
from agent_telemetry.deploy._report import render_approval, render_plan
from agent_telemetry.deploy._review_page import render_review_page
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.schema.lock import LOCK_PATH
from agent_telemetry.views import GENERATED_DIR
from tests.deploy.test_approval_gate import PARTITIONED, plan
from tests.deploy.test_plan import as_applied

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "telemetry.toml"

HOSTILE = {
    "markup_open": "a[",
    "markup_close": "x]",
    "markup_tag": "[prod]",
    "markup_style": "[bold red]boom[/]",
    "ansi": "\x1b[31mred\x1b[0m\x1b[2J",
    "osc8": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "crlf": "a\r\nb",
    "error_command": "x\n::error title=forged::forged",
    "add_mask": "\n::add-mask::secret",
    "at_start": "::warning::forged",
    "stop_commands": "##[stop-commands]token",
    "bidi": "\u202eevil\u202c\u2066x\u2069",
    "hangul_filler": "\u3164",
    "braille_blank": "\u2800",
    "zero_width": "a\u200bb\ufeff",
    "c1_control": "a\x9bb\x85c",
    "nel": "a\x85::error::nel",
    "line_separators": "a\u2028::error::b\u2029c",
    "leading_blanks": "  ::error::forged",  # the runner ignores leading blanks
    "script": "<script>alert(1)</script>",
    "img_onerror": "<img src=x onerror=alert(1)>",
    "image": "![img](http://x.example/i.png)",
    "js_link": "[Approve now](javascript:alert(1))",
    "autolink": "<https://evil.example/approve>",
    "attr_list": '*x*{: onclick="alert(1)"}',
    "mention": "@team please approve",
    "fence": "\n```\n# out of the fence",
    "backticks": "`` ` ``",
    "pipe": "a | b |",
}
# Every hostile string at once, for the places that cost a full `check` per run.
ALL_AT_ONCE = "_".join(HOSTILE.values())

ANNOTATION = re.compile(r"^::(error|warning|notice) (file=[^,:]*,)?(line=\d+,)?title=[A-Z_]+::")
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def problems(output: str, *, github: bool = False) -> list[str]:
    """Why ``output`` is unsafe for a terminal or a GitHub Actions log (empty: it is safe)."""
    found = []
    for char in sorted(set(output) - {"\n"}):
        category = unicodedata.category(char)
        if (
            category in ("Cc", "Cf", "Zl", "Zp")
            or char in INVISIBLE
            or (category == "Zs" and char != " ")
        ):
            found.append(f"raw {char!r}")
    for line in output.split("\n"):
        if line.lstrip().startswith("::") and not (github and ANNOTATION.match(line)):
            found.append(f"a line starts with '::': {line[:80]!r}")
    if "##[" in output:
        found.append("'##[' in the output")
    if "Traceback" in output:
        found.append("a traceback")
    return found


# --- Markdown and HTML: what a renderer makes of it -------------------------------------

MKDOCS_EXTENSIONS = ["admonition", "attr_list", "tables", "toc", "md_in_html"]
MKDOCS_EXTENSIONS += ["pymdownx.highlight", "pymdownx.superfences", "pymdownx.details"]
PLAIN = "plain words"


class _Elements(HTMLParser):
    """The elements of an HTML document (tag, attribute names, a link's target), and
    the text outside code where GitHub would link an @mention."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: Counter[tuple[str, ...]] = Counter()
        self.in_code = 0
        self.mentions: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        key = (tag, *sorted(name for name, _ in attrs))
        if tag in ("a", "img"):
            key += (dict(attrs).get("href") or dict(attrs).get("src") or "",)
        self.found[key] += 1
        self.in_code += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.in_code -= tag in ("code", "pre") and self.in_code > 0

    def handle_data(self, data: str) -> None:
        if not self.in_code and re.search(r"(?<![\w`])@team", data):
            self.mentions.append(data)


def rendered(markdown_source: str) -> dict[str, _Elements]:
    """``markdown_source`` as GitHub-flavoured CommonMark (markdown-it-py, with GitHub's
    bare-URL links) and as mkdocs makes it (Python-Markdown with mkdocs.yml's extensions)."""
    import markdown
    from markdown_it import MarkdownIt

    out = {}
    for name, html in (
        ("commonmark", MarkdownIt("gfm-like", {"html": True}).render(markdown_source)),
        ("mkdocs", markdown.markdown(markdown_source, extensions=MKDOCS_EXTENSIONS)),
    ):
        parser = _Elements()
        parser.feed(html)
        out[name] = parser
    return out


def markdown_problems(hostile: str, plain: str, *, comment: bool = False) -> list[str]:
    """Why the Markdown ``hostile`` (made with a hostile string) is unsafe, next to
    ``plain`` (the same made with a plain one): an element more or less is HTML, a link
    or an image that outside text made; ``comment``: a pull-request comment (GitHub's
    dialect only), where an @mention outside code notifies a team."""
    found = []
    seen, expected = rendered(hostile), rendered(plain)
    if comment:  # GitHub renders it (Python-Markdown would pass <details>' body raw)
        del seen["mkdocs"]
    for renderer, parsed in seen.items():
        if parsed.found != expected[renderer].found:
            extra = parsed.found - expected[renderer].found
            missing = expected[renderer].found - parsed.found
            found.append(f"{renderer}: elements {dict(extra)} more, {dict(missing)} fewer")
        if comment and parsed.mentions:
            found.append(f"{renderer}: an @mention outside code: {parsed.mentions[:1]}")
    return found


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes else "")


def as_path_part(text: str) -> str:
    return text.replace("/", "_")


# --- where the strings arrive -------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """How a hostile string gets in, and the command lines that then print it."""

    name: str
    commands: Callable[[Path, str], list[tuple[list[str], bool]]]  # (args, github format)


def log_path(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    folder = tmp / as_path_part(text)
    folder.mkdir()
    log = folder / f"{as_path_part(text)}.jsonl"
    log.write_text(
        '{"event":"chat_turn","schema_version":1,"tier":"public","kind":"text",'
        '"time":"2026-01-02T03:04:05Z"}\n',
        encoding="utf-8",
    )
    return [
        (["preview", str(log)], False),
        (["check-logs", str(log)], False),
        (["check-logs", "--format", "json", str(log)], False),
    ]


def broken_log_path(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """Gzip logs the load cannot read whole: report names them on stderr, in preview's words."""
    from tests.warehouse.broken_input import BAD_HEADER, half_gzip

    folder = tmp / as_path_part(text)
    folder.mkdir()
    cut = folder / f"{as_path_part(text)}.jsonl.gz"
    half_gzip(cut, 300)
    garbage = folder / f"{as_path_part(text)}-garbage.jsonl.gz"
    garbage.write_bytes(BAD_HEADER)
    # One run prints both: the load's table and notes name the cut file and the garbage
    # one (preview prints the same, one definition: tests/report/test_report_broken_logs.py).
    return [(["report", str(cut), str(garbage)], False)]


def lock_key(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    data = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    data["events"][text] = data["events"]["chat_turn"]
    lock = tmp / "schema.lock.json"
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")
    check = ["check", "--schema-only", "--config", str(CONFIG), "--lock", str(lock)]
    return [
        (check, False),
        ([*check, "--format", "json"], False),
        ([*check, "--format", "github"], True),
        (["lock", "--config", str(CONFIG), "--lock", str(lock)], False),
    ]


def config_reason(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """A reviewed exception (a member deleted from the committed lock) with ``text`` as
    its reason: check prints the reason beside the notice."""
    data = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    data["events"]["chat_turn"]["1"]["fields"][0]["members"].append("retired")
    lock = tmp / "schema.lock.json"
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")
    config = tmp / "telemetry.toml"
    config.write_text(
        CONFIG.read_text(encoding="utf-8")
        + "\n[[exceptions]]\n"
        + 'rule = "ENUM_VALUE_NO_DELETE"\nevent = "chat_turn"\nfield = "tier"\n'
        + f"reason = {json.dumps(text)}\n",
        encoding="utf-8",
    )
    check = ["check", "--schema-only", "--config", str(config), "--lock", str(lock)]
    return [
        (check, False),
        ([*check, "--format", "json"], False),
        ([*check, "--format", "github"], True),
        (["lock", "--config", str(config), "--lock", str(tmp / "new.lock.json")], False),
    ]


def bad_config_path(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """A config that does not exist: the error quotes its path."""
    missing = str(tmp / f"{as_path_part(text)}.toml")
    return [
        (["check", "--schema-only", "--config", missing], False),
        (["views", "build", "--check", "--config", missing], False),
    ]


def log_content(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """A log line whose event name, unknown key and value carry ``text``."""
    log = tmp / "content.jsonl"
    lines = [
        {"event": text, "schema_version": 1, "time": "2026-01-02T03:04:05Z"},
        {"event": "chat_turn", "schema_version": 1, "tier": text, "kind": "text", text: text},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return [
        (["preview", str(log)], False),
        (["check-logs", str(log)], False),
        (["check-logs", "--format", "json", str(log)], False),
        (["report", str(log)], False),
    ]


def report_path(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """``report --html PATH`` says where it wrote the page."""
    log = tmp / "one.jsonl"
    log.write_text(
        '{"event":"chat_turn","schema_version":1,"tier":"public","kind":"text",'
        '"time":"2026-01-02T03:04:05Z"}\n',
        encoding="utf-8",
    )
    return [(["report", str(log), "--html", str(tmp / f"{as_path_part(text)}.html")], False)]


def query_file(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """An analyst's query file for `views analyze` (docs/ci.md runs it on pull requests):
    its name, a rejected identifier the error quotes, and the SQL line it prints."""
    rejected = tmp / f"{as_path_part(text)}.sql"
    rejected.write_text(
        f"SELECT tier FROM agent_telemetry.chat_turn -- {text}\n"
        f"  WHERE `{text.replace('`', '')}` = 1 -- {text}\n",
        encoding="utf-8",
    )
    accepted = tmp / f"{as_path_part(text)}-ok.sql"
    alias = text.replace("`", "")
    accepted.write_text(f"SELECT tier AS `{alias}` FROM agent_telemetry.chat_turn\n", "utf-8")
    return [(["views", "analyze", "--config", str(CONFIG), str(rejected), str(accepted)], False)]


HOSTILE_MODELS = """
from typing import ClassVar

from agent_telemetry.schema import TelemetryEvent, count


class HostileEvent(TelemetryEvent):
    {doc!r}

    event_name: ClassVar[str] = "hostile_event"
    schema_version: ClassVar[int] = 1

    attempts: int | None = count(1, 5, {text!r})
    bytes_seen: int | None = count(0, 2**40, "Bytes.", waiver={text!r})


EVENTS = {{HostileEvent.event_name: HostileEvent}}
"""


def model_text(tmp: Path, text: str) -> list[tuple[list[str], bool]]:
    """A catalogue whose model docstring, field description and waiver reason carry
    ``text``: `events`, `check`, `lock` print them; `views build` writes them into the
    data dictionary (checked as Markdown in ``test_model_text_in_the_data_dictionary``)."""
    name = f"hostile_{tmp.name.replace('-', '_')}"
    (tmp / f"{name}.py").write_text(
        HOSTILE_MODELS.format(doc=f"One line. {text}", text=f"What it counts. {text}"),
        encoding="utf-8",
    )
    config = tmp / "telemetry.toml"
    views = '[views]\ndir = "v"\ndocs = "dictionary.md"\n'
    config.write_text(
        CONFIG.read_text(encoding="utf-8").replace("[views]\n", views)
        + f'\n[catalogue]\nmodule = "{name}"\nlock = "schema.lock.json"\n',
        encoding="utf-8",
    )
    given = ["--config", str(config)]
    return [
        (["events", *given], False),
        (["lock", *given], False),
        (["check", "--schema-only", *given], False),
        (["check", "--schema-only", *given, "--format", "json"], False),
        (["check", "--schema-only", *given, "--format", "github"], True),
        (["views", "build", *given], False),
        (["jsonschema", *given], False),
    ]


PLACES = [Place("log path", log_path), Place("lock key", lock_key)]
PLACES += [Place("broken log path", broken_log_path)]
PLACES += [Place("config reason", config_reason), Place("config path", bad_config_path)]
PLACES += [Place("log content", log_content), Place("report path", report_path)]
PLACES += [Place("query file", query_file), Place("model text", model_text)]


@pytest.fixture(autouse=True)
def _own_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A catalogue's folder goes on sys.path and its module into sys.modules: undone."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("hostile_"):
            del sys.modules[name]


@pytest.mark.parametrize("place", PLACES, ids=lambda p: p.name)
@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_no_command_prints_outside_text_raw(place: Place, text: str, tmp_path: Path) -> None:
    for args, github in place.commands(tmp_path, text):
        code, output = run(args)
        assert problems(output, github=github) == [], (args[:2], output)
        assert code in (0, 1, 2), output


def _dictionary(folder: Path, text: str) -> str:
    folder.mkdir()
    for args, _github in model_text(folder, text):
        if args[:2] == ["views", "build"]:
            code, output = run(args)
            assert code == 0, output
    return (folder / "dictionary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_model_text_in_the_data_dictionary(text: str, tmp_path: Path) -> None:
    """A model's docstring, field description and waiver reason, in docs/telemetry.md,
    render as written on GitHub and on the mkdocs site: no element comes from them."""
    hostile = _dictionary(tmp_path / "hostile", text)
    plain = _dictionary(tmp_path / "plain", PLAIN)
    assert markdown_problems(hostile, plain) == [], hostile
    assert problems(hostile) == [], hostile


def test_markup_in_a_path_prints_as_written(tmp_path: Path) -> None:
    """``exports[prod]`` and ``exports[staging]`` are two folders and print as such; a
    folder ``a[`` holding ``x].jsonl`` is a path, not broken markup (it was a
    ``MarkupError`` and a traceback)."""
    for index, (folder, name) in enumerate(
        [("exports[prod]", "run"), ("exports[staging]", "run"), ("a[", "x]")]
    ):
        log = tmp_path / str(index) / folder / f"{name}.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text(
            '{"event":"chat_turn","schema_version":1,"tier":"public","kind":"text",'
            '"time":"2026-01-02T03:04:05Z"}\n',
            encoding="utf-8",
        )
        for command in ("preview", "check-logs"):
            code, output = run([command, str(log)])
            assert (code, problems(output)) == (0, []), output
            # Tables fold a long path over lines: read it back without the folding.
            assert f"{folder}/{name}.jsonl" in re.sub(r"[\s│┃]", "", output)


# --- deployed descriptions, server errors: the plan renderer, server-free -----------


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_deployed_description_or_server_message_prints_safely(text: str) -> None:
    """Anyone who can edit a view in the console writes its description; the server
    writes dry-run errors. ``views plan`` and ``views approve`` print both."""
    planned = _deployed_plan(text)
    output = render_plan(planned)
    assert problems(output) == [], output
    assert "edited" in output  # the description is in the diff, on its own line
    record = approve(planned, "Ana Analyst")
    output = render_approval(record, f"approvals/{text}.json")
    assert problems(output) == [], output
    # The same plan for a pull-request comment and for bots: one plan document, cleaned
    # where the server's text enters it, so every renderer of it is safe.
    document = plan_document(planned, "agent-telemetry views approve")
    renderers = (render_markdown, render_review_page, lambda d: d.model_dump_json(indent=2))
    for shown in (render(document) for render in renderers):
        assert problems(shown) == [], shown
    # The pull-request comment: no element and no @mention from the server's text.
    comment = render_markdown(document)
    plain = render_markdown(plan_document(_deployed_plan(PLAIN), "agent-telemetry views approve"))
    assert markdown_problems(comment, plain, comment=True) == [], comment


@pytest.mark.parametrize("at", ["start", "end"])
def test_a_description_too_long_for_a_line_is_left_out_not_cut_open(at: str) -> None:
    # The comment caps a line's length; cutting through a code span would leave its
    # opening backtick alone and the rest of the server's text live Markdown.
    padding = "x" * 5_000
    hostile = " ".join(HOSTILE[k] for k in ("js_link", "image", "mention", "script", "fence"))
    pieces = (padding, hostile) if at == "end" else (hostile, padding)
    text, same_length = " ".join(pieces), " ".join(p.replace(hostile, PLAIN) for p in pieces)
    document = plan_document(_deployed_plan(text), "agent-telemetry views approve")
    comment = render_markdown(document)
    plain = render_markdown(
        plan_document(_deployed_plan(same_length), "agent-telemetry views approve")
    )
    assert markdown_problems(comment, plain, comment=True) == [], comment


def _deployed_plan(text: str) -> DeploymentPlan:
    """A plan whose deployed view carries ``text`` in every field the server writes."""
    first = PARTITIONED[0]
    applied = as_applied(first)
    assert applied.state is not None
    state = replace(
        applied.state,
        description=f"edited {text}",
        schema=tuple(
            replace(column, description=f"{column.description} {text}")
            for column in applied.state.schema
        ),
        view_query=f"SELECT 1 -- {text}",
        labels={**applied.state.labels, "team": text},
    )
    deployed = {first.name: DeployedView(state, DryRun((), error=f"Binder Error: {text}"))}
    return plan(deployed=deployed, target=f"p.{text}")


# --- committed SQL and output folders: one full run each, every string at once ------


@pytest.fixture(scope="module")
def hostile_sql_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed views, one of them replaced by SQL carrying every hostile string."""
    folder = tmp_path_factory.mktemp("views") / "generated"
    shutil.copytree(GENERATED_DIR, folder)
    victim = folder / "partitioned" / "chat_turn.sql"
    victim.write_text(
        f"-- {ALL_AT_ONCE}\nSELECT `{ALL_AT_ONCE}` FROM t WHERE x = '{ALL_AT_ONCE}' AND (\n",
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_committed_sql_file_prints_safely_in_every_check_format(
    hostile_sql_dir: Path, fmt: str
) -> None:
    code, output = run(
        ["check", "--config", str(CONFIG), "--sql-dir", str(hostile_sql_dir), "--format", fmt]
    )
    assert code == 1, output
    assert problems(output, github=fmt == "github") == [], output


def test_a_committed_sql_file_prints_safely_in_the_views_diff(hostile_sql_dir: Path) -> None:
    code, output = run(
        ["views", "build", "--check", "--config", str(CONFIG), "--sql-dir", str(hostile_sql_dir)]
    )
    assert code == 1, output
    assert problems(output) == [], output
    assert "chat_turn.sql" in output


def test_an_output_folder_prints_safely(tmp_path: Path) -> None:
    # One folder per string: all of them in one name is longer than a name may be.
    folder = tmp_path.joinpath(*(as_path_part(text) for text in HOSTILE.values()))
    code, output = run(
        [
            "views",
            "build",
            "--config",
            str(CONFIG),
            "--sql-dir",
            str(folder),
            "--docs",
            str(folder / "telemetry.md"),
        ]
    )
    assert code == 0, output
    assert problems(output) == [], output
    assert output.count("wrote ") > 10


# --- the door itself ------------------------------------------------------------------


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_clean_keeps_one_line_and_is_stable(text: str) -> None:
    shown = clean(text)
    assert problems(shown) == []
    assert "\n" not in shown
    assert clean(shown) == shown  # cleaning twice changes nothing
    assert "\n" not in github_data(text)
    assert "%0A" not in github_data("a\nb")  # the newline is already shown as \n


def test_markup_escapes_what_rich_would_read() -> None:
    from rich.console import Console

    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for text in ("a[", "x]", "[prod]", "[bold red]boom[/]", "tail\\"):
        console.print(f"[bold]{markup(text)}[/bold]")
    shown = console.export_text()
    assert shown.splitlines() == ["a[", "x]", "[prod]", "[bold red]boom[/]", "tail\\"]


def test_no_control_format_separator_or_odd_space_leaves_clean_raw() -> None:
    """Every code point in Unicode's control (Cc: C0, DEL, C1 with NEL), format (Cf: bidi,
    zero-width, BOM, soft hyphen), line and paragraph separator (Zl, Zp) and space (Zs,
    bar U+0020) categories comes out of ``clean`` as a printable ASCII escape."""
    kept = []
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Zl", "Zp") or (category == "Zs" and char != " "):
            shown = clean(f"a{char}b")
            if not (shown.isascii() and shown.isprintable()) or shown == f"a{char}b":
                kept.append(f"U+{code:04X} {category}")
    assert kept == []
