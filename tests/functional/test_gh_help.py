"""Every gh command line the tool can send (``gh_commands.ALL_BUILDERS``) is one the real gh
takes: its subcommand exists, every flag it uses is listed in that subcommand's ``--help``
(FLAGS and INHERITED FLAGS, long and short forms; a ``--flag=true|false`` only on a flag
that takes no value), the whole line parses (gh, not logged in, stops at the login, exit
4, not at a flag, exit 1), and the ``--json`` fields read are ones gh prints. The stand-in
(:mod:`tests.gh_standin`) takes no flag, short form or JSON field gh lacks.

gh's ``--help`` works offline and without a login. Where gh is not installed these tests
skip saying so, except under ``RELEASE_REQUIRE_GH=1`` (set by ``.ci/run``, which installs
Debian's gh): then they fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.core import gh_commands
from release.core.github import PR_FIELDS, RELEASE_FIELDS
from tests import gh_standin as standin
from tests.github_support import GhStandIn

REQUIRE_ENV = "RELEASE_REQUIRE_GH"
TOKENS = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST")
_FLAG_LINE = re.compile(
    r"^\s+(?:(?P<short>-[A-Za-z0-9]), )?(?P<long>--[a-z][a-z0-9-]*)(?: (?P<kind>\S+))?(?:\s{2,}|$)"
)
BUILDERS = dict(gh_commands.ALL_BUILDERS)


@dataclass(frozen=True)
class Help:
    usage: str
    flags: dict[str, str]  # long -> short ("" where none)
    valued: frozenset[str]  # the long flags that take a value


def gh_program() -> str:
    found = shutil.which("gh", path="/usr/bin") or shutil.which("gh")
    if found is None:
        reason = "gh (GitHub's CLI) is not installed"
        if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail(f"{reason} [{REQUIRE_ENV}=1: the gh checks must run here]", pytrace=False)
        pytest.skip(reason)
    return found


def unlogged_env(home: Path) -> dict[str, str]:
    """gh with no login and no token: it answers from itself alone."""
    env = {k: v for k, v in os.environ.items() if k not in TOKENS}
    return {**env, "HOME": str(home), "GH_CONFIG_DIR": str(home / "gh"), "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def gh(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    return gh_program(), unlogged_env(tmp_path_factory.mktemp("gh-home"))


def run(gh: tuple[str, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [gh[0], *args], env=gh[1], capture_output=True, text=True, timeout=60, check=False
    )


def parse_help(text: str) -> Help:
    """The USAGE line and the flags of FLAGS and INHERITED FLAGS in gh's ``--help``."""
    usage, flags, valued, section = "", {}, set(), ""
    for line in text.splitlines():
        if line and not line[0].isspace():
            section = line.strip()
            continue
        if section == "USAGE" and line.strip():
            usage = usage or line.strip()
        elif section in ("FLAGS", "INHERITED FLAGS") and (match := _FLAG_LINE.match(line)):
            flags[match["long"]] = match["short"] or ""
            if match["kind"]:
                valued.add(match["long"])
    return Help(usage, flags, frozenset(valued))


def help_of(gh: tuple[str, dict[str, str]], command: str, sub: str) -> Help:
    proc = run(gh, command, sub, "--help")
    return parse_help(proc.stdout + proc.stderr)


def problems(argv: list[str], help: Help) -> list[str]:
    """What in ``argv`` the help of its subcommand does not allow."""
    found = []
    if not help.usage.startswith(f"gh {argv[0]} {argv[1]}"):
        found.append(f"gh has no subcommand {argv[0]} {argv[1]} (usage: {help.usage!r})")
    shorts = {short: long for long, short in help.flags.items() if short}
    for arg in argv[2:]:
        if not arg.startswith("-"):
            continue
        name, eq, value = arg.partition("=")
        long = name if name.startswith("--") else shorts.get(name[:2], "")
        if long not in help.flags:
            found.append(f"{name}: not a flag of gh {argv[0]} {argv[1]}")
        elif eq and long not in help.valued and value not in ("true", "false"):
            found.append(f"{arg}: {long} takes true or false")
    return found


def standin_problems(
    command: tuple[str, str], flags: dict[str, tuple[str, str]], help: Help
) -> list[str]:
    """The stand-in's flags of ``command`` that gh's help does not list as it takes them."""
    found = []
    for long, (short, kind) in flags.items():
        if long not in help.flags:
            found.append(f"gh {' '.join(command)} has no {long}")
        elif short not in ("", help.flags[long]):
            found.append(f"{short} is not gh's short form of {long}")
        elif (kind != "bool") != (long in help.valued):
            found.append(f"{long}: the stand-in takes it as {kind}")
    return found


def json_fields(gh: tuple[str, dict[str, str]], command: str, sub: str) -> set[str]:
    """The fields ``gh COMMAND SUB --json`` can print (it lists them when given none)."""
    proc = run(gh, command, sub, "--json")
    text = proc.stdout + proc.stderr
    assert "Specify one or more comma-separated fields" in text, text
    return {line.strip() for line in text.splitlines()[1:] if line.strip()}


# -- the tool's command lines ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_flag_of_a_command_line_is_in_gh_s_help(
    gh: tuple[str, dict[str, str]], name: str
) -> None:
    argv = BUILDERS[name]
    help = help_of(gh, argv[0], argv[1])
    assert "--repo" in help.flags, help  # the help was read: every such command has it
    assert problems(argv, help) == []


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_command_line_parses_in_the_real_gh(
    gh: tuple[str, dict[str, str]], name: str
) -> None:
    """Not logged in, gh stops at the login after parsing the line: a flag it did not take
    would stop it first (exit 1, "unknown flag")."""
    proc = run(gh, *BUILDERS[name])
    stop = standin.NOT_LOGGED_IN_CI if gh[1].get("CI") else standin.NOT_LOGGED_IN
    assert (proc.returncode, proc.stderr.splitlines()[:1]) == (4, stop.splitlines()[:1]), (
        proc.stderr
    )


@pytest.mark.parametrize("ci", ["", "true"])
def test_the_stand_in_stops_at_the_login_in_the_real_ghs_words(
    gh: tuple[str, dict[str, str]], gh_standin: GhStandIn, ci: str
) -> None:
    """gh words its login stop otherwise where CI is set (as on a CI runner): the stand-in
    says what the real gh says in both."""
    argv = BUILDERS["pr_view"]
    real = subprocess.run(
        [gh[0], *argv], env={**gh[1], "CI": ci}, capture_output=True, text=True, timeout=60
    )
    gh_standin.fault("pr view", "not-logged-in")
    env = gh_standin.env({**gh[1], "CI": ci})
    fake = subprocess.run(["gh", *argv], env=env, capture_output=True, text=True, timeout=60)
    assert real.returncode == 4
    assert (fake.returncode, fake.stderr) == (real.returncode, real.stderr)


@pytest.mark.parametrize(
    ("command", "fields", "standin_fields"),
    [("pr", PR_FIELDS, standin.PR_JSON), ("release", RELEASE_FIELDS, standin.RELEASE_JSON)],
)
def test_the_fields_read_are_fields_gh_prints(
    gh: tuple[str, dict[str, str]], command: str, fields: tuple[str, ...], standin_fields: set[str]
) -> None:
    printed = json_fields(gh, command, "view")
    assert set(fields) <= printed
    assert standin_fields == printed  # the stand-in refuses a field gh would refuse


# -- the stand-in ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(standin.FLAGS), ids=" ".join)
def test_the_standin_takes_no_flag_gh_lacks(
    gh: tuple[str, dict[str, str]], command: tuple[str, str]
) -> None:
    help = help_of(gh, *command)
    assert "--repo" in help.flags, help
    assert standin_problems(command, standin.FLAGS[command], help) == []


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_the_standin_takes_every_command_line_the_tool_sends(name: str) -> None:
    command, _, options = standin.parse(BUILDERS[name])  # raises Exit where it would refuse
    assert command == tuple(BUILDERS[name][:2]) and "--repo" in options


# -- the checks fail on what they are there for ---------------------------------------------

VIEW_HELP = """USAGE
  gh pr view [<number> | <url> | <branch>] [flags]

FLAGS
  -c, --comments          View pull request comments
      --json fields       Output JSON with the specified fields
  -w, --web               Open a pull request in the browser

INHERITED FLAGS
      --help                     Show help for command
  -R, --repo [HOST/]OWNER/REPO   Select another repository using the [HOST/]OWNER/REPO format
"""


def test_the_help_is_read_with_short_forms_and_value_kinds() -> None:
    help = parse_help(VIEW_HELP)
    assert help.flags == {
        "--comments": "-c",
        "--json": "",
        "--web": "-w",
        "--help": "",
        "--repo": "-R",
    }
    assert help.valued == {"--json", "--repo"}
    assert problems(["pr", "view", "1", "-R", "o/r", "--json", "number", "-c"], help) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["pr", "view", "1", "--milestone=v1"], "--milestone: not a flag"),
        (["pr", "view", "1", "-m", "v1"], "-m: not a flag"),
        (["pr", "view", "1", "--web=soon"], "--web takes true or false"),
        (["pr", "show", "1"], "gh has no subcommand pr show"),
    ],
)
def test_a_flag_or_subcommand_gh_lacks_is_found(argv: list[str], expected: str) -> None:
    assert any(expected in problem for problem in problems(argv, parse_help(VIEW_HELP)))


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"--milestone": ("-m", "value")}, "gh pr view has no --milestone"),
        ({"--comments": ("-C", "bool")}, "-C is not gh's short form of --comments"),
        ({"--json": ("", "bool")}, "--json: the stand-in takes it as bool"),
        ({"--web": ("-w", "value")}, "--web: the stand-in takes it as value"),
    ],
)
def test_a_standin_flag_gh_lacks_is_found(flags: dict[str, tuple[str, str]], expected: str) -> None:
    assert standin_problems(("pr", "view"), flags, parse_help(VIEW_HELP)) == [expected]
