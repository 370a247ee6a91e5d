"""The generated pipelines run here as their CI would run them, for one pushed tag.

Each job (step) runs in a fresh checkout of the *engine's* remote at the tag, in a fresh
virtual environment, its ``run:`` / ``command:`` lines executed exactly as written, in the
dependency order the file gives; ``uses:`` steps are emulated by what they do:

- ``actions/checkout`` (``fetch-depth: 0``): a clone of the remote, every branch and tag,
  detached at the tag;
- ``actions/setup-python``: a virtual environment whose ``bin`` comes first on ``PATH``;
- ``actions/upload-artifact`` / ``download-artifact``: a directory per artifact name;
- Buildkite's agent checks out by commit with an explicit refspec and no tags (its known
  behaviour), and ``buildkite-agent artifact download`` is a small script over a
  directory per step.

**Approvals and secrets, as the CI gives them.** A GitHub job with an ``environment:``
does not start until the run's ``approve`` callback approves it (asked with the job's key
and the environment: an environment without reviewers is one the callback always
approves); a Buildkite ``block`` step is passed only when ``approve`` approves it (asked
with its key and its text). A job that is not approved waits, and so does every job that
needs it (and, on Buildkite, every later step with no ``depends_on``: a block is a wait
too); :meth:`Runner.resume` asks again for what waits, as a reviewer would later. The
secrets given to the runner belong to environments: a job reads an environment's secrets
only when it runs in that environment (GitHub's scoping; an unknown secret reads empty).

Which workflow or step runs is decided from the file: GitHub's ``on.push.tags`` filter
patterns (matched with GitHub's glob rules) and Buildkite's ``if`` conditionals (the forms
the generator writes; any other form fails the run). Buildkite's ``$$`` (in commands and
in ``env``) reads back as ``$``, as its upload gives it.

The install line runs as written against a real package index (pypiserver on loopback,
:mod:`tests.index_support`, which also serves decoys of this tool's name): each job's
Python installs this tool and nox as the file pins them. To keep a job's set-up to a few
seconds, the dependencies of both come installed already, as a runner's cache would have
them (one directory on ``PYTHONPATH``, made once; its ``bin`` last on ``PATH``); this test
environment's own ``bin`` is never on ``PATH``: ``release`` and ``nox`` are the job's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.index_support import PackageIndex, fresh_python, pip_env

RUN_TIMEOUT = 900
ON_TAG = "github.ref_type == 'tag'"
# (the job's or block step's key, its environment or its text) -> whether it is approved
Approve = Callable[[str, str], bool]


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A GitHub filter pattern as a regular expression: ``*`` (no ``/``), ``**``, ``+`` and
    ``?`` on the character before, ``[...]``, and ``\\`` escaping a special character."""
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out += re.escape(pattern[i + 1])
            i += 2
            continue
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2
            continue
        if ch == "*":
            out += "[^/]*"
        elif ch in "+?":
            out += ch
        elif ch == "[":
            end = pattern.index("]", i)
            out, i = out + pattern[i : end + 1], end + 1
            continue
        else:
            out += re.escape(ch)
        i += 1
    return re.compile("^" + out + "$")


def tag_filter_matches(patterns: list[str], tag: str) -> bool:
    """GitHub's rule: patterns in order, a ``!`` pattern excluding what matched before."""
    matched = False
    for pattern in patterns:
        if pattern.startswith("!"):
            matched = matched and not glob_regex(pattern[1:]).match(tag)
        elif glob_regex(pattern).match(tag):
            matched = True
    return matched


_COMPARISON = re.compile(r"^build\.tag (==|!=) null$|^build\.tag =~ /(.*)/$")


def buildkite_condition(text: str, tag: str | None) -> bool:
    """A Buildkite ``if`` of the forms written: comparisons of ``build.tag`` with ``null``
    or a regular expression, joined by ``||`` and ``&&`` (``&&`` binding first)."""
    text = text.replace("$$", "$")  # the pipeline's interpolation, on upload

    def one(part: str) -> bool:
        found = _COMPARISON.match(part.strip())
        assert found, f"a conditional the runner does not know: {part!r}"
        if found[1] == "==":
            return tag is None
        if found[1] == "!=":
            return tag is not None
        return tag is not None and re.search(found[2], tag) is not None

    return any(all(one(p) for p in alt.split(" && ")) for alt in text.split(" || "))


AGENT = """#!{python}
import shutil, sys
from pathlib import Path
args = sys.argv[1:]
assert args[:2] == ["artifact", "download"], args
pattern, dest, rest = args[2], Path(args[3]), args[4:]
store = Path({store!r})
steps = [rest[1]] if rest[:1] == ["--step"] else sorted(p.name for p in store.iterdir())
found = 0
for step in steps:
    for path in sorted((store / step).glob(pattern)):
        if path.is_file():
            rel = path.relative_to(store / step)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / rel)
            found += 1
sys.exit(0 if found else 1)
"""


class Artifacts:
    """``actions/upload-artifact`` and ``actions/download-artifact`` as what they do: a
    directory per artifact name under ``store``."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.files: dict[str, list[Path]] = {}  # name -> the files kept, relative

    def upload(self, ws: Path, given: dict[str, Any]) -> None:
        source = ws / given["path"]
        files = (
            [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
        )
        assert files or given.get("if-no-files-found") != "error", f"nothing at {source}"
        kept = self.store / given["name"]
        for path in files:
            rel = path.relative_to(source.parent if source.is_file() else source)
            (kept / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, kept / rel)
        self.files[given["name"]] = [p.relative_to(kept) for p in kept.rglob("*") if p.is_file()]

    def download(self, ws: Path, given: dict[str, Any]) -> None:
        if "name" in given:
            names = [given["name"]]
        else:
            prefix = given["pattern"].removesuffix("*")
            names = [n for n in self.files if n.startswith(prefix)]
        target = ws / given.get("path", ".")
        for name in names:
            for rel in self.files[name]:
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.store / name / rel, target / rel)


@dataclass
class CiRun:
    """One pipeline run for one tag: what ran, in order, and what each job printed; what
    was approved, and what waits for an approval."""

    tag: str
    jobs: list[str] = field(default_factory=list)
    output: dict[str, str] = field(default_factory=dict)
    artifacts: Artifacts | None = None  # GitHub's (Buildkite's agent keeps its own)
    branch: str = ""  # Buildkite's: the branch whose history the agent fetches
    approved: list[str] = field(default_factory=list)  # jobs or block steps, in order
    held: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # waiting, in order

    @property
    def waiting(self) -> list[str]:
        """The keys of the jobs (steps) that wait for an approval, in order."""
        return [key for key, _ in self.held]


class Runner:
    """Runs pipelines of the engine whose remote is ``remote``, under ``work``; the jobs
    install from ``index``, with ``cached`` (:func:`tests.index_support.dependencies`)
    importable."""

    def __init__(
        self,
        remote: Path,
        work: Path,
        env: dict[str, str],
        fresh: Callable[[], None],
        index: PackageIndex,
        cached: Path,
        secrets: dict[str, dict[str, str]] | None = None,  # environment -> name -> value
    ) -> None:
        self.remote, self.work, self.fresh, self.index = remote, work, fresh, index
        self.secrets = secrets or {}
        self.store = work / "artifacts"
        shims = work / "shims"
        shims.mkdir(parents=True, exist_ok=True)
        (shims / "python3").symlink_to(sys.executable)  # the agent's Python
        agent = shims / "buildkite-agent"
        agent.write_text(AGENT.format(python=sys.executable, store=str(self.store / "buildkite")))
        agent.chmod(0o755)
        mine = Path(sys.executable).parent  # never on a job's PATH: release and nox are its own
        system = [p for p in env.get("PATH", os.environ["PATH"]).split(os.pathsep) if p]
        path = [str(shims), *(p for p in system if Path(p) != mine), str(cached / "bin")]
        pip = pip_env(index.url, work / "home", os.pathsep.join(path))
        mine_env = {k: v for k, v in env.items() if not k.startswith(("PIP_", "PYTHON"))}
        self.env = mine_env | {k: v for k, v in pip.items() if k.startswith(("PIP_", "PATH"))}
        self.env["PYTHONPATH"] = str(cached)
        self.count = 0
        self.pythons: list[Path] = []  # each GitHub job's own (Buildkite's makes its own)

    def _run(self, job: str, script: str, cwd: Path, env: dict[str, str], out: list[str]) -> None:
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        out.append(f"$ {script}\n{proc.stdout}{proc.stderr}")
        assert proc.returncode == 0, f"{job}: exit {proc.returncode}\n" + "\n".join(out)

    def _workspace(self, job: str) -> Path:
        self.count += 1
        return self.work / f"{self.count:02d}-{job}"

    # -- GitHub Actions ---------------------------------------------------------------------

    def github(self, workflows: dict[str, dict[str, Any]], tag: str, approve: Approve) -> CiRun:
        """Every workflow a push of ``tag`` starts, each job in the order its needs give,
        a job in an environment once ``approve`` approves it."""
        run = CiRun(tag, artifacts=Artifacts(self.store / "github"))
        pending = [
            (key, job)
            for workflow in workflows.values()
            if tag_filter_matches(workflow["on"]["push"]["tags"], tag)
            for key, job in workflow["jobs"].items()
        ]
        self._github_jobs(run, pending, approve)
        return run

    def resume(self, run: CiRun, approve: Approve) -> CiRun:
        """The jobs (steps) of ``run`` that wait, ``approve`` asked again for each."""
        pending, run.held = run.held, []
        if run.artifacts is not None:
            self._github_jobs(run, pending, approve)
        else:
            self._buildkite_steps(run, pending, approve)
        return run

    def _github_jobs(
        self, run: CiRun, pending: list[tuple[str, dict[str, Any]]], approve: Approve
    ) -> None:
        for key, job in pending:
            assert job.get("if") in (None, ON_TAG), job.get("if")  # a tag's push: it runs
            needs, environment = job.get("needs", []), job.get("environment")
            if set(run.waiting).intersection(needs):
                run.held.append((key, job))
                continue
            if environment is not None:
                if not approve(key, environment):
                    run.held.append((key, job))
                    continue
                run.approved.append(key)
            assert set(needs) <= set(run.jobs), f"{key} before its needs"
            self._github_job(run, key, job)

    def _github_job(self, run: CiRun, key: str, job: dict[str, Any]) -> None:
        self.fresh()  # a fresh runner: none of the engine's images
        base = self._workspace(key)
        ws = base / "repo"
        subprocess.run(
            ["git", "clone", "--quiet", str(self.remote), str(ws)], check=True, env=self.env
        )
        subprocess.run(
            ["git", "checkout", "--quiet", "--detach", run.tag], cwd=ws, check=True, env=self.env
        )
        env = {
            **self.env,
            "GITHUB_ACTIONS": "true",
            "GITHUB_REF": f"refs/tags/{run.tag}",
            "GITHUB_REF_NAME": run.tag,
            "GITHUB_REF_TYPE": "tag",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_WORKSPACE": str(ws),
        }
        # the secrets of the job's own environment, none of another's; none without one
        secrets = self.secrets.get(job.get("environment") or "", {})
        env |= {k: _expand(v, ws, secrets) for k, v in (job.get("env") or {}).items()}
        out: list[str] = []
        artifacts = run.artifacts
        assert artifacts is not None
        steps = job["steps"]
        assert steps[0]["uses"].startswith("actions/checkout@")
        assert steps[0]["with"] == {"fetch-depth": 0, "persist-credentials": False}
        for step in steps[1:]:
            condition = step.get("if")
            assert condition in (None, ON_TAG), condition
            uses = step.get("uses", "")
            if uses.startswith("actions/setup-python@"):
                python = fresh_python(base / "python", self.work / "seeds")
                self.pythons.append(python.parent)
                env["PATH"] = f"{python}{os.pathsep}{env['PATH']}"
            elif uses.startswith("actions/upload-artifact@"):
                artifacts.upload(ws, step["with"])
            elif uses.startswith("actions/download-artifact@"):
                artifacts.download(ws, step["with"])
            else:
                given = (step.get("env") or {}).items()
                step_env = {k: _expand(v, ws, secrets) for k, v in given}
                self._run(key, step["run"], ws, {**env, **step_env}, out)
        run.jobs.append(key)
        run.output[key] = "\n".join(out)

    # -- Buildkite --------------------------------------------------------------------------

    def buildkite(self, pipeline: dict[str, Any], tag: str, branch: str, approve: Approve) -> CiRun:
        """The steps a build of ``tag`` (on ``branch``'s history) uploads, in order, a block
        step passed once ``approve`` approves it."""
        run = CiRun(tag, branch=branch)
        pending = [(s["key"], s) for s in pipeline["steps"] if buildkite_condition(s["if"], tag)]
        self._buildkite_steps(run, pending, approve)
        return run

    def _buildkite_steps(
        self, run: CiRun, pending: list[tuple[str, dict[str, Any]]], approve: Approve
    ) -> None:
        blocked = False  # a block not passed: a later step with no depends_on waits for it
        for key, step in pending:
            needs = step.get("depends_on", [])
            if set(run.waiting).intersection(needs) or (blocked and not needs):
                run.held.append((key, step))
                continue
            assert set(needs) <= {*run.jobs, *run.approved}, f"{key} before its needs"
            if "block" not in step:
                self._buildkite_step(run, step, run.branch)
            elif approve(key, step["block"]):
                run.approved.append(key)
            else:
                run.held.append((key, step))
                blocked = True

    def _buildkite_step(self, run: CiRun, step: dict[str, Any], branch: str) -> None:
        self.fresh()
        key = step["key"]
        ws = self._workspace(key) / "build"
        ws.mkdir(parents=True)
        commit = subprocess.run(
            ["git", "rev-parse", f"{run.tag}^{{commit}}"], cwd=self.remote, capture_output=True,
            text=True, check=True,
        ).stdout.strip()  # fmt: skip
        # the agent: by commit, with an explicit refspec and no tags
        for argv in (
            ["git", "init", "--quiet"],
            ["git", "remote", "add", "origin", str(self.remote)],
            ["git", "fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}"],
            ["git", "checkout", "--quiet", "--detach", commit],
        ):  # fmt: skip
            subprocess.run(argv, cwd=ws, check=True, env=self.env, capture_output=True)
        assert not subprocess.run(
            ["git", "tag"], cwd=ws, capture_output=True, text=True, check=True
        ).stdout
        env = {
            **self.env,
            "BUILDKITE": "true",
            "BUILDKITE_TAG": run.tag,
            "BUILDKITE_COMMIT": commit,
            "BUILDKITE_BRANCH": run.tag,
            **{k: v.replace("$$", "$") for k, v in (step.get("env") or {}).items()},
        }
        script = "\n".join(c.replace("$$", "$") for c in step["command"])
        out: list[str] = []
        self._run(key, script, ws, env, out)
        kept = self.store / "buildkite" / key
        for pattern in step.get("artifact_paths", []):
            for path in sorted(ws.glob(pattern)):
                if path.is_file():
                    (kept / path.relative_to(ws)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, kept / path.relative_to(ws))
        run.jobs.append(key)
        run.output[key] = "\n".join(out)


# the job's token, as GitHub gives it to a job (``github.token``, ``secrets.GITHUB_TOKEN``):
# no file remote asks for it, and no job may print it
JOB_TOKEN = "ghs_jobtoken0123456789abcdefghijklmnopqr"


def _expand(value: str, ws: Path, secrets: dict[str, str]) -> str:
    """The ``${{ }}`` expressions the generated files use, as a runner gives them: the
    job's ``secrets`` (its environment's; a secret it does not have reads empty), and the
    job's token, one no file remote asks for."""
    value = value.replace("${{ github.workspace }}", str(ws))
    value = value.replace("${{ github.token }}", JOB_TOKEN)
    value = value.replace("${{ secrets.GITHUB_TOKEN }}", JOB_TOKEN)  # the same token
    value = re.sub(
        r"\$\{\{ secrets\.([A-Z_]+) \}\}", lambda found: secrets.get(found[1], ""), value
    )
    assert "${{" not in value, f"an expression the runner does not know: {value}"
    return value
