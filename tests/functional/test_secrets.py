"""Secrets are never printed: what git, docker and skopeo say goes through one redaction
(``release.adapters.known_secrets.shown``) before a terminal or a log gets it, and a
registry value, the config's or any command's ``--registry``, is checked by one rule that
refuses credentials in it without showing them, and anything but HOST[:PORT]/PATH before
anything runs."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from release.adapters import process
from release.adapters.host_tools import registry_login
from release.adapters.known_secrets import known, shown
from release.cli.program import run as run_release
from release.commands.registry import COMMANDS
from release.core.pipelines import REGISTRY_PASSWORD, REGISTRY_USER, REVISION_LABEL, VARIANT_LABEL
from release.core.redaction import redacted
from release.errors import EngineError
from tests.conftest import repo_state, run_cli
from tests.engine_support import BASE_1291, make_engine_repo

PASSWORD = "hunter2-of-the-registry"  # RELEASE_REGISTRY_PASSWORD in these tests
URL_TOKEN = "t0ken-in-a-url"
BEARER = "eyJhbGciOiJIUzI1NiJ9.bearer-part"
GITHUB = "ghs_" + "A1b2C3d4E5" * 4
SECRETS = (PASSWORD, URL_TOKEN, BEARER, GITHUB)
# what a registry client says when it is refused: every kind of secret in one line
SAID = (
    f'time="2026-01-01T00:00:00Z" level=fatal msg="reading manifest in '
    f"docker://user:{URL_TOKEN}@127.0.0.1:5000/org/x: unauthorized: sent Authorization: "
    f'Bearer {BEARER}; https://x-access-token:{GITHUB}@github.com; password {PASSWORD}"'
)


# -- the rules, pure ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("fatal: unable to access 'https://user:tok3n-x@github.com/org/x.git/': 403",
         "fatal: unable to access 'https://user:***@github.com/org/x.git/': 403"),
        (f"remote: https://{GITHUB}@github.com/org/x", "remote: https://***@github.com/org/x"),
        (f"x-access-token:{GITHUB} refused", "x-access-token:*** refused"),
        ("Error: docker://user:pw0rd@127.0.0.1:5000/org/x:1: unauthorized",
         "Error: docker://user:***@127.0.0.1:5000/org/x:1: unauthorized"),
        ("pushing user:pw0rd@127.0.0.1:5000/org/x:1 failed",
         "pushing user:***@127.0.0.1:5000/org/x:1 failed"),
        ("> Authorization: Basic dXNlcjpwdw==", "> Authorization: Basic ***"),
        ('http.extraheader="AUTHORIZATION: bearer abc.def"',
         'http.extraheader="AUTHORIZATION: bearer ***"'),
        (f"token {GITHUB} expired", "token *** expired"),
    ],
)  # fmt: skip
def test_a_secret_in_what_a_tool_said_is_replaced(said: str, expected: str) -> None:
    assert redacted(said) == expected
    assert redacted(expected) == expected  # once is enough


@pytest.mark.parametrize(
    "said",
    [
        "ssh://git@github.com/org/x.git",
        "git@github.com:org/x.git",
        "nvidia/cuda:12.9.1-base-ubuntu22.04@sha256:" + "a" * 64,
        "127.0.0.1:5000/org/x:v0.1.0rc1",
        "Signed-off-by: A Maintainer <a@example.com>",
        "https://github.com/org/x/pull/12 and http://[::1]:5000/v2/",
        'WWW-Authenticate: Bearer realm="https://auth.example.com/token"',
    ],
)
def test_text_without_a_secret_is_kept_as_it_is(said: str) -> None:
    assert redacted(said) == said


def test_a_known_secret_goes_wherever_it_stands_but_not_a_short_one() -> None:
    text = "logged in with hunter2-long, hunter2 and pw"
    assert redacted(text, {"hunter2-long", "hunter2", "pw"}) == "logged in with ***, *** and pw"


def test_the_registry_login_ci_hands_to_docker_is_known() -> None:
    env = {REGISTRY_USER: "maintainer", REGISTRY_PASSWORD: PASSWORD}
    pair = base64.b64encode(f"maintainer:{PASSWORD}".encode()).decode()
    assert known(env) >= {PASSWORD, pair}
    assert redacted(f"auth {pair} for {PASSWORD}", known(env)) == "auth *** for ***"


def _in_one_pass(text: str) -> str:
    """:func:`redacted` without known values as it looks through any text: each shape's
    regex over all of it (what the line by line way for a long text must give)."""
    from release.core import redaction as rules

    lower = text.lower()
    if "@" in text:
        text = rules._URL_USERINFO.sub(rules._url, text)
        text = rules._BARE_USERINFO.sub(lambda m: f"{m['user']}:{rules.MASK}@", text)
    if "x-access-token" in lower:
        text = rules._ACCESS_TOKEN.sub(lambda m: m["lead"] + rules.MASK, text)
    if "_" in text:
        text = rules._GITHUB_TOKEN.sub(rules.MASK, text)
    if "authorization" in lower:
        text = rules._AUTHORIZATION.sub(lambda m: m["lead"] + rules.MASK, text)
    return text


# what a long document may hold near a secret: each shape, the header names in other cases
# and split across lines, the characters whose lower case is another length ("İ") or ASCII
# ("\u212a", the Kelvin sign: "k")
_PIECES = [
    SAID, URL_TOKEN, GITHUB, "user:pw0rd@127.0.0.1:5000/x", "https://tok@github.com/x",
    "x-ACCESS-toKen:abc", "X-access-to\u212aen:abc", "x-accİss-token:abc", "AuthoriZation: ",
    "Authorization:\n Bearer abc.def", "authorİzation: basic x", "quantization", "-a", "IZ",
    "\n", "\n", " ", "- [Doc] Explain résumé tokens ✓ (#205) by Zoë Ünal", "ghp_", "_",
]  # fmt: skip


@given(
    pieces=st.lists(st.sampled_from(_PIECES) | st.text(max_size=12), max_size=40),
    long=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_a_long_text_is_redacted_as_one_pass_over_it_would(pieces: list[str], long: bool) -> None:
    text = "".join(pieces)
    if long:  # a document: looked through line by line
        text = "- a line of notes (#1) by someone\n" * 150 + text
    assert redacted(text) == _in_one_pass(text)


@given(st.text(alphabet="authorizationAUTHORIZATIONx-ckeKsS\u0130\u212a\u0307 \n", max_size=40))
@settings(max_examples=500, deadline=None)
def test_a_header_name_is_found_in_any_case_as_lower_case_finds_it(text: str) -> None:
    from release.core.redaction import _holds

    for word, at, width in (("authorization", 7, 1), ("x-access-token", 0, 2)):
        assert _holds(text, word, at, width) == (word in text.lower()), (word, text)
        padded = f"Authorİ{text}{word.upper()}"
        assert _holds(padded, word, at, width) == (word in padded.lower())


def test_what_finding_a_header_name_in_any_case_relies_on() -> None:
    """Over every code point: only "İ" lower-cases to more than one character (a dotted
    "i"), and only "x", "z", "a" and "-" and their capitals lower-case to a text holding
    them."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    assert [c for c in chars if len(c.lower()) > 1] == ["\u0130"]
    assert "\u0130".lower() == "i\u0307"
    for letter in "xza-":
        assert {c for c in chars if letter in c.lower()} == {letter, letter.upper()}


# -- the process boundary: error output, a failure's line, a log -------------------------------


def test_a_tools_error_output_failure_line_and_log_are_redacted_its_data_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REGISTRY_PASSWORD, PASSWORD)
    script = (
        "import sys\n"
        f"print({('data ' + PASSWORD)!r})\n"
        f"sys.stderr.write({SAID!r} + '\\n')\n"
        "sys.exit(1)\n"
    )
    result = process.run([sys.executable, "-c", script], error=EngineError)
    assert result.stdout == f"data {PASSWORD}\n"  # output that is read as data is as it came
    assert "unauthorized" in result.stderr and "***" in result.stderr
    assert not [s for s in SECRETS if s in result.stderr]
    assert process.last_line(result.stdout) == "data ***"
    assert process.first_line(SAID).endswith('password ***"')
    log = tmp_path / "logs" / "tool.log"
    process.run([sys.executable, "-c", script], error=EngineError, log=log)
    written = log.read_text()
    assert "unauthorized" in written and not [s for s in SECRETS if s in written]


def test_passwords_read_from_dockers_login_file_are_never_shown(tmp_path: Path) -> None:
    secret = "s3cret-of-the-login-file"
    token = base64.b64encode(f"maintainer:{secret}".encode()).decode()
    config = tmp_path / "docker"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"auths": {"127.0.0.1:5000": {"auth": token}}}))
    said = f"denied: {secret} ({token})"
    assert shown(said) == said  # not known before the file is read
    registry_login("127.0.0.1:5000", {"DOCKER_CONFIG": str(config)})
    assert shown(said) == "denied: *** (***)"


# -- registry values: the config's and every --registry, one rule ----------------------------

USERINFO = f"user:{PASSWORD}@127.0.0.1:5000/org"
BAD_REGISTRIES = [
    "127.0.0.1:5000/org@sha256:" + "a" * 64,
    "/../../etc",
    "127.0.0.1:5000/org\n--insecure",
    "127.0.0.1:5000/org;touch x",
    "$(touch x)",
    "http://127.0.0.1:5000/org",
    " --insecure",
    "127.0.0.1:5000/\x1b[31morg",
    "-v",
]
REGISTRY_COMMANDS = [c.name for c in COMMANDS if any(o.name == "registry" for o in c.options)]


def images_checkout(root: Path, table: str = "") -> Path:
    """A committed checkout with the sample engine's image matrix (and ``table`` after it)."""
    sample = Path(__file__).resolve().parents[2] / "release" / "sample" / "engine"
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text((sample / "pyproject.toml").read_text() + table)
    for args in (("init", "--quiet", "--initial-branch=main"), ("add", "--all"),
                 ("commit", "--quiet", "-m", "one")):  # fmt: skip
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def test_every_command_that_takes_a_registry_is_known_here() -> None:
    assert set(REGISTRY_COMMANDS) >= {"images.publish", "images.push", "images.pull", "ci"}


@pytest.mark.parametrize("value", [USERINFO, *BAD_REGISTRIES])
@pytest.mark.parametrize("command", REGISTRY_COMMANDS)
def test_every_registry_option_is_refused_before_anything_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    value: str,
) -> None:
    root = images_checkout(tmp_path / "engine")
    before = repo_state(root)
    started: list[object] = []

    def no_process(*args: object, **kwargs: object) -> None:
        started.append(args)
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.chdir(root)
    extra = ["--format", "github"] if command == "ci" else []
    with monkeypatch.context() as patched:
        patched.setattr(subprocess, "Popen", no_process)
        code = run_release([command, *extra, f"--registry={value}"])  # "-v" too, as a value
    said = capsys.readouterr()
    assert code == 2, said
    assert started == [] and said.out == ""
    (line,) = said.err.splitlines()
    assert line.startswith("error: --registry: ")
    assert PASSWORD not in line and "\x1b" not in line
    if value == USERINFO:
        assert "credentials in a registry value are not accepted" in line
        assert line.endswith("log in with docker login 127.0.0.1:5000")
    else:
        assert "is not a registry path" in line
    assert repo_state(root) == before
    assert not (root / "x").exists() and not (tmp_path / "x").exists()


def test_publish_with_credentials_in_its_registry_reaches_no_registry(tmp_path: Path) -> None:
    root = images_checkout(tmp_path / "engine")
    tools = fake_tools(tmp_path)
    before = repo_state(root)
    refused = run_cli(root, "images.publish", "--registry", USERINFO, env=tools)
    assert refused.code == 2, refused.output
    assert PASSWORD not in refused.output and "docker login 127.0.0.1:5000" in refused.stderr
    assert not (tmp_path / "bin" / "skopeo.calls").exists()
    assert not (tmp_path / "bin" / "docker.calls").exists()
    assert repo_state(root) == before


@pytest.mark.parametrize("where", ["pyproject.toml", "--config"])
def test_credentials_in_the_configs_registry_are_refused_unshown(
    tmp_path: Path, where: str
) -> None:
    line = f'registry = "{USERINFO}"\n'
    if where == "pyproject.toml":
        root = images_checkout(tmp_path / "engine", "")
        text = (root / "pyproject.toml").read_text()
        (root / "pyproject.toml").write_text(text.replace("[tool.release.images]\n",
                                                          "[tool.release.images]\n" + line, 1))  # fmt: skip
        subprocess.run(["git", "commit", "--quiet", "-am", "registry"], cwd=root, check=True)
        given: list[str] = []
    else:
        root = images_checkout(tmp_path / "engine")
        outside = tmp_path / "tried.toml"
        text = (root / "pyproject.toml").read_text()
        outside.write_text(text.replace("[tool.release.images]\n",
                                        "[tool.release.images]\n" + line, 1))  # fmt: skip
        given = ["--config", str(outside)]
    before = repo_state(root)
    refused = run_cli(root, *given, "images.matrix")
    assert refused.code == 2, refused.output
    assert PASSWORD not in refused.output
    assert "registry: credentials in a registry value are not accepted" in refused.stderr
    checked = run_cli(root, *given, "check")
    assert checked.code == 1 and PASSWORD not in checked.output
    assert "credentials in a registry value are not accepted" in checked.stdout
    assert repo_state(root) == before


# -- end to end: a fake skopeo and docker that quote secrets in their errors ------------------

FAKE_TOOL = """\
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
name = os.path.basename(sys.argv[0])
with open(os.path.join(here, name + ".calls"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if name == "docker" and args[:1] == ["version"]:
    print("20.10.99")
    sys.exit(0)
if name == "docker" and args[:2] == ["image", "inspect"]:
    with open(os.path.join(here, "image.json")) as f:
        print("[" + f.read() + "]")
    sys.exit(0)
if name == "docker" and args[:1] in (["tag"], ["image"]):
    sys.exit(0)
sys.stderr.write(os.environ["FAKE_SAID"] + "\\n")
sys.exit(1)
"""


def fake_tools(tmp_path: Path) -> dict[str, str]:
    """A docker and a skopeo of our own (each call logged beside them) that fail, saying
    :data:`SAID`, except for docker's version, image inspect, tag and image rm; the
    environment that makes ``release`` use them, with the registry password CI sets."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("docker", "skopeo"):
        tool = bin_dir / name
        tool.write_text(f"#!{sys.executable}\n{FAKE_TOOL}")
        tool.chmod(0o755)
    return {
        "RELEASE_DOCKER": str(bin_dir / "docker"),
        "RELEASE_SKOPEO": str(bin_dir / "skopeo"),
        "RELEASE_CACHE_DIR": str(tmp_path / "cache"),
        REGISTRY_PASSWORD: PASSWORD,
        "FAKE_SAID": SAID,
    }


@pytest.mark.parametrize(
    ("command", "tool"), [("images.publish", "skopeo"), ("images.push", "docker")]
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_what_skopeo_or_docker_says_reaches_no_terminal_with_its_secrets(
    tmp_path: Path, command: str, tool: str, as_json: bool
) -> None:
    repo = make_engine_repo(
        tmp_path / "engine",
        tmp_path / "home",
        variants=[{"id": "a", "cuda": "12.9.1", "base-image": BASE_1291}],
        checks=[],
        default="a",
    )
    env = fake_tools(tmp_path)
    image = {
        "Id": "sha256:" + "1" * 64,
        "Os": "linux",
        "Architecture": "amd64",
        "Config": {"Labels": {REVISION_LABEL: repo.head, VARIANT_LABEL: "a"}},
    }
    (tmp_path / "bin" / "image.json").write_text(json.dumps(image))
    before = repo_state(repo.root)
    flags = ["--json"] if as_json else []
    result = repo.release(command, "--registry", "127.0.0.1:5000/org", *flags, **env)
    assert result.code == 6, result.output
    assert (tmp_path / "bin" / f"{tool}.calls").exists()  # the tool did run and fail
    assert "unauthorized" in result.output and "***" in result.output
    assert [s for s in SECRETS if s in result.output] == []
    if as_json:
        assert "***" in json.loads(result.stdout)["error"]
    assert repo_state(repo.root) == before
