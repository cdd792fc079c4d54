"""The reference and explanation pages name only what the code has, with the defaults the code gives.

The rules moved out of the how-tos (docs/reference/, docs/explanation/, and the explanation pages at the top of
docs/: e-mail, the PDF text layer, the code layout) name commands, options, defaults, modules, constants and
files of the repository in passing, where no other test reads them. Each class of those facts is read from the
pages here and compared with the code itself, so that renaming an option, changing a default, moving a constant
or a file shows on the page that names it:

- every ``pdi COMMAND … --option`` written in code spans is a command of ``pdi.cli`` and one of its options;
- every default a page gives an option (``--settle`` seconds (default 1), ``--max-mb``, 50 by default, a row of
  a table whose columns are *option* and *default*) is the default click has for it, for the command the
  paragraph names (``pdi serve``, ``pdi capture``) or, when it names none, for one of the commands having it;
- every ``pdi.module.NAME`` exists (the module imports and has the name);
- every repository path (``src/…``, ``tests/…``, ``scripts/…``) exists.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(
    [*(DOCS / "reference").glob("*.md"), *(DOCS / "explanation").glob("*.md"),
     DOCS / "email.md", DOCS / "pdf-text-layer.md", DOCS / "layout.md"]
)
#: A code span: what is between two backticks, across a line break (the pages are wrapped).
SPAN = re.compile(r"`([^`]+)`")


def commands() -> dict[str, click.Command]:
    """Every command and subcommand of ``pdi``, by its words (``pdi``, ``pdi serve``, ``pdi mirror sync``)."""
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, words: list[str]) -> None:
        found[" ".join(words)] = command
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                walk(sub, [*words, name])

    walk(cli, ["pdi"])
    return found


COMMANDS = commands()


def options(command: click.Command) -> dict[str, click.Option]:
    """A command's options by each of their spellings (``--output`` and ``-o``, ``--progress`` and
    ``--no-progress``)."""
    return {spelling: p for p in command.params if isinstance(p, click.Option) for spelling in p.opts + p.secondary_opts}


def command_of(words: list[str]) -> str:
    """The longest run of ``words`` from the start that is a command: ``pdi mirror sync`` of
    ``pdi mirror sync --series S``."""
    for end in range(len(words), 0, -1):
        if " ".join(words[:end]) in COMMANDS:
            return " ".join(words[:end])
    return ""


#: A fenced block: ```` ```sh ```` … ```` ``` ````.
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def pdi_spans(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each ``pdi`` command of a page, in a code span or a line of a fenced block (``$ `` and comments left
    out; each command of ``a && b``, ``a | b`` on its own), as the command it names and the words after it
    (``pdi serve --port 0`` is ``("pdi serve", ["--port", "0"])``)."""
    lines = [line.removeprefix("$ ").split(" #", 1)[0] for block in FENCE.findall(text)
             for line in block.replace("\\\n", " ").splitlines()]
    spans = [span for line in [*SPAN.findall(FENCE.sub("", text)), *lines] for span in re.split(r"&&|\|\||[|;]", line)]
    for span in spans:
        words = span.split()
        if len(words) < 2 or words[0] != "pdi" or not re.fullmatch(r"[a-z][a-z-]*|--?[a-zA-Z][\w-]*", words[1]):
            continue
        command = command_of(words)
        yield command, words[len(command.split()):]


def test_the_search_for_command_lines_finds_them() -> None:
    """What the next test reads: the command lines of the pages, of many commands and options."""
    lines = [(page, command, rest) for page in PAGES for command, rest in pdi_spans(page.read_text("utf-8"))]
    assert len(lines) > 400
    assert {"pdi serve", "pdi capture", "pdi mirror sync", "pdi verify"} <= {command for _, command, _ in lines}


def test_every_command_and_option_the_pages_name_is_the_codes() -> None:
    """Every ``pdi COMMAND`` a page writes as a code span is a command, and every option after it is one of
    that command's (``pdi get --info``, never an option another command has, or had)."""
    wrong: list[str] = []
    for page in PAGES:
        for command, rest in pdi_spans(page.read_text("utf-8")):
            if command == "pdi" and rest and not rest[0].startswith("-"):
                wrong.append(f"{page.name}: no command `pdi {' '.join(rest)}`")
                continue
            takes = options(COMMANDS[command])
            for word in rest[:rest.index("--")] if "--" in rest else rest:  # after "--": words, no options
                option = word.split("=", 1)[0]
                if re.fullmatch(r"--?[a-zA-Z][\w-]*", option) and option != "--help" and option not in takes:
                    wrong.append(f"{page.name}: `{command}` has no {option} (`{command} {' '.join(rest)}`)")
    assert wrong == []


#: A default given in prose: the option's code span, then within a few words ``(default 50``, ``default 4``,
#: ``(default: 600``, ``default `127.0.0.1```, or ``50 by default``.
DEFAULT_IN_PROSE = re.compile(
    r"`(?:pdi [a-z ]+ )?(--[a-z][a-z-]*)(?: [A-Z]+)?`[^`.;\n]{0,40}?"
    r"(?:\(?default:? `?([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:\.[0-9]+)*)`?(?![\w.-]| ?%)"
    r"|\(?([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:\.[0-9]+)?) by default)"
)
#: A row of a table whose first two columns are *option* and *default*: ``| `--cache-mib` | 32 | … |``.
DEFAULT_IN_TABLE_ROW = re.compile(r"^\| `(--[a-z][a-z-]*)` \| ([^|]+?) \|", re.MULTILINE)


def said_defaults(page: Path) -> Iterator[tuple[str, str, str]]:
    """Each default ``page`` gives an option: the option, the value as written, and the paragraph it is in."""
    text = page.read_text("utf-8")
    for paragraph in re.split(r"\n\s*\n", text):
        flat = paragraph.replace("\n", " ")
        for match in DEFAULT_IN_PROSE.finditer(flat):
            yield match.group(1), match.group(2) or match.group(3), flat
        lines = paragraph.splitlines()
        if lines and re.match(r"\| *option *\| *default *\|", lines[0]):
            for match in DEFAULT_IN_TABLE_ROW.finditer(paragraph):
                if re.fullmatch(r"[0-9][0-9,.]*|none|`[^`]+`", match.group(2)):  # not "one a core, at most 4"
                    yield match.group(1), match.group(2), flat


def same(said: str, default: object) -> bool:
    """Whether a value as a page writes it (``1,000``, ``120``, ``127.0.0.1``, ``none``) is ``default``."""
    if default is None or default is getattr(click.core, "UNSET", None):  # click 8.2's "not given"
        return said in ("none", "nothing")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        try:
            return float(said.replace(",", "")) == float(default)
        except ValueError:
            return False
    return said.strip("`") == str(default)


def test_the_search_for_defaults_finds_them() -> None:
    """What the next test reads: the defaults the pages give, in prose and in tables, of many options."""
    said = {option for page in PAGES for option, _, _ in said_defaults(page)}
    assert {"--settle", "--concurrency", "--timeout", "--fixity-memo", "--timemap-page", "--db-connections",
            "--cache-mib", "--evaluations", "--answer-mib", "--max-connections", "--max-mb", "--host"} <= said


def test_every_default_the_pages_give_is_the_options_default() -> None:
    """Each default a page gives an option is click's default for it: of the command its paragraph names
    (``pdi import``'s ``--max-seconds`` is not ``pdi mhtml check``'s), else of one of the commands having it."""
    wrong: list[str] = []
    for page in PAGES:
        for option, said, paragraph in said_defaults(page):
            having = {name: options(command)[option] for name, command in COMMANDS.items()
                      if option in options(command)}
            named = [name for name in having if re.search(rf"`{re.escape(name)}\b", paragraph)]
            candidates = [having[name] for name in named] or list(having.values())
            if not candidates:
                continue  # not pdi's option (a script's: `scripts/demo --port N`); the option test above reads those
            if not any(same(said, candidate.default) for candidate in candidates):
                defaults = ", ".join(f"{name}: {p.default!r}" for name, p in having.items() if p in candidates)
                wrong.append(f"{page.name}: {option} said to default to {said!r}, but {defaults}")
    assert wrong == []


#: ``pdi.module.NAME`` (or ``pdi.module``) in a code span.
MODULE_NAME = re.compile(r"`(pdi(?:\.[A-Za-z_][A-Za-z_0-9]*)+)")
#: Code spans that read as a module's name and are not: systemd's unit, the DNS zone of NAPTR look-ups.
NOT_MODULES = {"pdi.service", "pdi.urn.arpa"}


def test_every_module_and_name_the_pages_give_exists() -> None:
    """Each ``pdi.x.y.NAME`` a page names is a module, or a name of one (a constant, a class, a function)."""
    named = {(page.name, found) for page in PAGES for found in MODULE_NAME.findall(page.read_text("utf-8"))
             if found not in NOT_MODULES}
    assert len(named) > 50
    wrong: list[str] = []
    for page_name, dotted in sorted(named):
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            try:
                module = importlib.import_module(".".join(parts[:end]))
            except ImportError:
                continue
            value: object = module
            for attribute in parts[end:]:
                if not hasattr(value, attribute):
                    wrong.append(f"{page_name}: `{dotted}`: {'.'.join(parts[:end])} has no {attribute}")
                    break
                value = getattr(value, attribute)
            break
    assert wrong == []


#: A path of the repository in a code span: ``src/pdi/…``, ``tests/…``, ``scripts/…`` and the other folders.
REPOSITORY_PATH = re.compile(r"`((?:src|tests|scripts|bench|docs|examples|requirements|\.ci)/[^`\s*<>{}…]*)`")
#: Folders the tests write into (their results), not the repository's.
MADE_BY_TESTS = ("tests/artifacts/",)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_file_the_page_names_is_there(page: Path) -> None:
    """Each file or folder of the repository a page names (``src/pdi/mhtml/_encode.c``,
    ``tests/server/test_server_memento.py``, ``scripts/midnight``) is where the page says."""
    missing = [path for path in REPOSITORY_PATH.findall(page.read_text("utf-8"))
               if not path.startswith(MADE_BY_TESTS) and "X.Y.Z" not in path and not (ROOT / path.split("::")[0].split("#")[0]).exists()]
    assert missing == []
