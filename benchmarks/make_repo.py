"""A vLLM-shaped git history for the benchmarks, built once with ``git fast-import``.

Layout (``commits`` = 20,000 by default, ``window`` = a quarter of it):

- ``main``: a root commit tagged ``v0.30.0``, then ``commits`` squash-merged PRs with
  ``[Category]`` subjects spelt many ways, noise prefixes, increasing ``(#PR)`` numbers,
  ``Signed-off-by:``/``Co-authored-by:`` trailers, many authors and some ``Revert "..."``
  commits. Every commit edits one line of one file, so patches are real.
- the *cut* is ``window`` commits behind the tip. After the cut the files are split by
  role so that picks always apply cleanly and keep their patch-id:

  * every other commit edits *backport* files only; all of these are already
    cherry-picked (``-x``, same patch) onto ``releases/v0.31.0``, which starts at the cut;
  * ``picks`` commits (fixes) each edit their own *pick* file, touched by no other
    commit after the cut: a fresh branch at the cut takes them all without conflict;
  * the rest edit *general* files (reverts after the cut only revert these).

The repository is cached under ``benchmarks/.cache/`` keyed on :data:`VERSION` and the
size; ``layout.json`` next to it names the commits the scenarios in ``run.py`` need.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GIT_ENV", "VERSION", "Layout", "ensure_repo"]

VERSION = 1  # bump whenever the generated history changes
CACHE = Path(__file__).resolve().parent / ".cache"
EPOCH = 1_700_000_000
BACKPORT_BRANCH = "releases/v0.31.0"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench Runner",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench Runner",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

# Category -> the spellings subjects use for it (weights: how common the category is).
SPELLINGS: dict[str, tuple[int, tuple[str, ...]]] = {
    "bugfix": (22, ("Bugfix", "BugFix", "bugfix", "Bug", "Fix", "Hotfix")),
    "core": (8, ("Core", "core")),
    "v1": (8, ("V1",)),
    "frontend": (8, ("Frontend", "frontend", "OpenAI")),
    "kernel": (8, ("Kernel", "kernel")),
    "ci": (10, ("CI/Build", "CI", "Build", "ci")),
    "doc": (7, ("Doc", "Docs", "doc")),
    "misc": (9, ("Misc", "misc", "Chore")),
    "feature": (8, ("Feature", "Feat", "Model", "New Model")),
    "perf": (5, ("Perf", "Performance", "perf")),
    "hardware": (4, ("ROCm", "TPU", "CPU", "XPU", "Hardware][AMD")),
    "quant": (3, ("Quantization", "Quant")),
    "none": (6, ("",)),
}
NOISE = ("main", "v0.23.0", "v0.29.1", "1/N", "2/N", "3/N", "WIP")
FIRST = (
    "Alex",
    "Bo",
    "Chen",
    "Dana",
    "Eli",
    "Fatima",
    "Gao",
    "Hiro",
    "Ines",
    "Jun",
    "Kai",
    "Lena",
    "Ming",
    "Nadia",
    "Omar",
    "Priya",
    "Qiang",
    "Rosa",
    "Sam",
    "Tariq",
    "Uma",
    "Vik",
    "Wei",
    "Xin",
    "Yuki",
    "Zoe",
    "José",
    "Łukasz",
    "Søren",
    "Anaïs",
)
LAST = (
    "Li",
    "Wang",
    "Zhang",
    "Liu",
    "Chen",
    "Yang",
    "Kumar",
    "Singh",
    "Smith",
    "Garcia",
    "Müller",
    "Rossi",
    "Kim",
    "Park",
    "Sato",
    "Nguyen",
    "Cohen",
    "Silva",
    "Novak",
    "Ivanova",
    "Okafor",
    "Haddad",
)
VERBS = ("Fix", "Add", "Support", "Optimize", "Refactor", "Remove", "Update", "Handle", "Avoid")
THINGS = (
    "prefix caching",
    "chunked prefill",
    "CUDA graph capture",
    "FP8 KV cache",
    "speculative decoding",
    "LoRA adapters",
    "tool calling",
    "structured outputs",
    "block tables",
    "the scheduler budget",
    "MoE routing",
    "tensor parallel all-reduce",
    "the tokenizer cache",
    "multimodal inputs",
    "pipeline parallel",
    "sampler metadata",
)
PLACES = (
    "Llama",
    "Qwen3",
    "DeepSeek-V3",
    "Mixtral",
    "Gemma3",
    "the OpenAI server",
    "FlashInfer backend",
    "Triton attention",
    "the V1 engine core",
    "ROCm builds",
    "the Dockerfile",
    "CPU offloading",
    "the benchmark scripts",
    "the docs site",
)
AREAS = (
    "vllm/model_executor/layers",
    "vllm/model_executor/models",
    "vllm/v1/core",
    "vllm/v1/worker",
    "vllm/v1/attention/backends",
    "vllm/entrypoints/openai",
    "vllm/distributed",
    "vllm/lora",
    "vllm/multimodal",
    "vllm/transformers_utils",
    "vllm/platforms",
    "csrc/attention",
    "csrc/quantization",
    "tests/kernels",
    "tests/v1",
    "docs/source/serving",
    "benchmarks",
    ".buildkite",
)
FILE_LINES = 24


@dataclass
class Layout:
    """What ``run.py`` needs to know about a generated repository."""

    version: int
    commits: int  # on main after the root; the notes range v0.30.0..main holds them all
    window: int  # commits after the cut
    root: str = ""
    cut: str = ""
    head: str = ""
    picks: list[str] = field(default_factory=list)  # main order, all fixes, conflict-free
    backport_branch: str = BACKPORT_BRANCH
    backported: int = 0

    @classmethod
    def read(cls, path: Path) -> Layout:
        return cls(**json.loads(path.read_text()))


@dataclass
class _Commit:
    index: int
    message: str
    author: tuple[str, str]
    path: str
    content: bytes


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        capture_output=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return result.stdout.decode()


class _History:
    """Deterministic generator of the main history (see the module docstring)."""

    def __init__(self, commits: int, seed: int = 31) -> None:
        self.rng = random.Random(seed)
        self.commits = commits
        self.window = commits // 4
        self.cut_index = commits - self.window  # commit index (root = 0) of the cut
        n_picks = min(200, self.window // 10)
        n_backport_files = max(8, self.window // 20)
        paths = self._paths(320 + n_backport_files + n_picks)
        self.general = paths[:320]
        self.general_set = set(self.general)
        self.backport = paths[320 : 320 + n_backport_files]
        self.pick_files = paths[320 + n_backport_files :]
        odd = range(self.cut_index + 1 + 1, commits + 1, 2)
        step = len(odd) / n_picks
        self.pick_at = {odd[int(k * step + step / 2)]: k for k in range(n_picks)}
        self.files = {p: [f"value_{i} = {i}".encode() for i in range(FILE_LINES)] for p in paths}
        people = [f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}" for _ in range(900)]
        self.people = sorted(set(people))
        self.weights = [1 / (k + 1) ** 0.8 for k in range(len(self.people))]
        self.pr = 10_000

    def _paths(self, count: int) -> list[str]:
        paths: list[str] = []
        for k in range(count):
            area = AREAS[k % len(AREAS)]
            ext = ".cu" if area.startswith("csrc") else ".md" if area.startswith("docs") else ".py"
            paths.append(f"{area}/{THINGS[k % 16].split()[-1].lower()}_{k:03d}{ext}")
        return paths

    def _person(self) -> tuple[str, str]:
        name = self.rng.choices(self.people, self.weights)[0]
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        email = ascii_name.lower().replace(" ", ".") + "@users.dev"
        return name, email

    def _subject(self, kind: str | None = None) -> str:
        rng = self.rng
        if kind is None:
            kinds = list(SPELLINGS)
            kind = rng.choices(kinds, [SPELLINGS[k][0] for k in kinds])[0]
        spelling = rng.choice(SPELLINGS[kind][1])
        prefix = f"[{spelling}]" if spelling else ""
        if prefix and rng.random() < 0.06:
            prefix = "[V1]" + prefix if kind != "v1" else prefix + "[Core]"
        if rng.random() < 0.07:
            noise = f"[{rng.choice(NOISE)}]"
            prefix = noise + prefix if rng.random() < 0.7 else prefix + noise
        self.pr += rng.randint(1, 4)
        title = f"{rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)}"
        return f"{prefix} {title} (#{self.pr})".lstrip()

    def _body(self, author: tuple[str, str]) -> str:
        rng = self.rng
        lines = [f"{rng.choice(VERBS)} {rng.choice(THINGS)}." for _ in range(rng.randint(0, 3))]
        trailers = [f"Signed-off-by: {author[0]} <{author[1]}>"] if rng.random() < 0.85 else []
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
            name, email = self._person()
            trailers.append(f"Co-authored-by: {name} <{email}>")
        return "\n\n".join(p for p in ("\n".join(lines), "\n".join(trailers)) if p)

    def _edit(
        self, path: str, index: int, line: int | None = None, value: bytes | None = None
    ) -> tuple[int, bytes]:
        lines = self.files[path]
        line = self.rng.randrange(FILE_LINES) if line is None else line
        old = lines[line]
        lines[line] = value if value is not None else f"value_{line} = {index}".encode()
        return line, old

    def generate(self, sha_of: Callable[[int], str]) -> Iterator[tuple[_Commit, dict[str, bytes]]]:
        """Yield the root and then every main commit, oldest first.

        ``sha_of(index)`` is the sha of an earlier commit (for the bodies of reverts).
        """
        content = {p: b"\n".join(ls) + b"\n" for p, ls in self.files.items()}
        yield (
            _Commit(0, "Initial import of the engine\n", ("Engine Bot", "bot@users.dev"), "", b""),
            {**content, "pyproject.toml": PYPROJECT.encode()},
        )
        edits: list[_Edit] = [_Edit("", 0, b"", b"", "", True)]  # by index; the root is no edit
        for index in range(1, self.commits + 1):
            after_cut = index > self.cut_index
            role = (
                "pick"
                if index in self.pick_at
                else ("backport" if after_cut and (index - self.cut_index) % 2 == 1 else "general")
            )
            author = self._person()
            target = self._revert_target(edits, index) if role == "general" else None
            if target is not None:
                edit = edits[target]
                edit.reverted = True
                self.pr += self.rng.randint(1, 4)
                subject = f'Revert "{edit.subject}" (#{self.pr})'
                body = (
                    f"This reverts commit {sha_of(target)}."
                    if self.rng.random() < 0.7
                    else f"Reverts vllm-project/vllm#{edit.subject.rpartition('(#')[2][:-1]}"
                )
                path, line = edit.path, edit.line
                current = self.files[path][line]
                self._edit(path, index, line, edit.old if current == edit.new else None)
            else:
                kind = (
                    self.rng.choice(("bugfix", "bugfix", "ci", "doc")) if role == "pick" else None
                )
                subject, body = self._subject(kind), self._body(author)
                if role == "pick":
                    path = self.pick_files[self.pick_at[index]]
                elif role == "backport":
                    path = self.rng.choice(self.backport)
                else:
                    pool = (
                        self.general
                        if after_cut
                        else self.rng.choice(
                            (self.general, self.general, self.backport, self.pick_files)
                        )
                    )
                    path = self.rng.choice(pool)
                line, current = self._edit(path, index)
            edits.append(
                _Edit(path, line, current, self.files[path][line], subject, target is not None)
            )
            message = f"{subject}\n\n{body}\n" if body else f"{subject}\n"
            data = b"\n".join(self.files[path]) + b"\n"
            yield _Commit(index, message, author, path, data), {path: data}

    def _revert_target(self, edits: list[_Edit], index: int) -> int | None:
        """About one commit in 80 reverts a recent one (after the cut: a general one)."""
        if self.rng.random() >= 0.0125:
            return None
        after_cut = index > self.cut_index
        low = max(self.cut_index + 1 if after_cut else 1, index - 60)
        choices = [
            k
            for k in range(low, index)
            if not edits[k].reverted
            and not edits[k].revert
            and (not after_cut or edits[k].path in self.general_set)
        ]
        return self.rng.choice(choices) if choices else None


@dataclass
class _Edit:
    path: str
    line: int
    old: bytes
    new: bytes
    subject: str
    revert: bool
    reverted: bool = False


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


def _commit_block(
    ref: str,
    mark: int,
    parent: str | None,
    commit: _Commit,
    files: dict[str, bytes],
    committer: tuple[str, str],
    when: int,
) -> bytes:
    author = f"{commit.author[0]} <{commit.author[1]}> {when} +0000".encode()
    who = f"{committer[0]} <{committer[1]}> {when + 60} +0000".encode()
    parts = [
        b"commit %s\nmark :%d\nauthor %s\ncommitter %s\n" % (ref.encode(), mark, author, who),
        _data(commit.message.encode()),
    ]
    if parent:
        parts.append(b"from %s\n" % parent.encode())
    parts += [b"M 100644 inline %s\n%s" % (p.encode(), _data(c)) for p, c in files.items()]
    return b"".join(parts) + b"\n"


def _picked_message(message: str, sha: str, reason: str | None) -> str:
    """What ``git cherry-pick -x`` (plus a reason trailer) makes of ``message``."""
    last = message.rstrip("\n").split("\n\n")[-1]
    trailer_end = all(":" in line for line in last.splitlines()) and "\n\n" in message
    text = message.rstrip("\n") + ("\n" if trailer_end else "\n\n")
    text += f"(cherry picked from commit {sha})\n"
    return text + (f"Cherry-pick-reason: {reason}\n" if reason else "")


class _FastImport:
    """A ``git fast-import`` process that can be asked for the sha of a mark on the way."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--date-format=raw", "--cat-blob-fd=1"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **GIT_ENV},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def write(self, block: bytes) -> None:
        self.stdin.write(block)

    def sha(self, mark: int) -> str:
        self.stdin.write(b"get-mark :%d\n" % mark)
        self.stdin.flush()
        return self.stdout.readline().decode().strip()

    def close(self) -> None:
        self.stdin.close()
        if self.proc.wait() != 0:
            raise RuntimeError("git fast-import failed")


def build(path: Path, commits: int) -> Layout:
    """Write the repository at ``path`` (a new directory) and return its layout."""
    _git(path.parent, "init", "--quiet", "--initial-branch=main", str(path))
    history = _History(commits)
    stream = _FastImport(path)
    backport = set(history.backport)
    backported: list[_Commit] = []
    for commit, files in history.generate(lambda index: stream.sha(index + 1)):
        parent = f":{commit.index}" if commit.index else None
        stream.write(
            _commit_block(
                "refs/heads/main",
                commit.index + 1,
                parent,
                commit,
                files,
                ("GitHub", "noreply@github.com"),
                EPOCH + commit.index * 900,
            )
        )
        if commit.index > history.cut_index and commit.path in backport:
            backported.append(commit)
    stream.write(
        b"tag v0.30.0\nfrom :1\ntagger Release Manager <release@users.dev> %d +0000\n"
        b"%s" % (EPOCH, _data(b"vLLM v0.30.0\n"))
    )
    mark = commits + 1
    parent = f":{history.cut_index + 1}"
    rng = random.Random(7)
    for commit in backported:
        mark += 1
        reason = rng.choice((None, None, "regression", "critical"))
        message = _picked_message(commit.message, stream.sha(commit.index + 1), reason)
        picked = _Commit(commit.index, message, commit.author, commit.path, commit.content)
        stream.write(
            _commit_block(
                f"refs/heads/{BACKPORT_BRANCH}",
                mark,
                parent,
                picked,
                {commit.path: commit.content},
                ("Release Manager", "release@users.dev"),
                EPOCH + commit.index * 900 + 3600,
            )
        )
        parent = f":{mark}"
    stream.close()
    shas = _git(path, "rev-list", "--reverse", "main").split()
    _git(path, "config", "gc.auto", "0")
    _git(path, "reset", "--quiet", "--hard", "main")
    _git(path, "gc", "--quiet")
    return Layout(
        version=VERSION,
        commits=commits,
        window=history.window,
        root=shas[0],
        cut=shas[history.cut_index],
        head=shas[-1],
        picks=[shas[i] for i in sorted(history.pick_at)],
        backported=len(backported),
    )


PYPROJECT = """\
[project]
name = "vllm"
dynamic = ["version"]

[tool.release]
main-branch = "main"
repo-url = "https://github.com/vllm-project/vllm"
"""


def ensure_repo(commits: int) -> tuple[Path, Layout]:
    """The cached repository for ``commits`` (built on first use) and its layout."""
    home = CACHE / f"history-v{VERSION}-{commits}"
    if not (home / "layout.json").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="building-", dir=CACHE))
        try:
            layout = build(staging / "repo", commits)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        (staging / "layout.json").write_text(json.dumps(layout.__dict__, indent=1))
        shutil.rmtree(home, ignore_errors=True)
        staging.rename(home)
    return home / "repo", Layout.read(home / "layout.json")


if __name__ == "__main__":
    import sys

    size = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    repo, info = ensure_repo(size)
    print(
        f"{repo}: {info.commits} commits, cut {info.cut[:10]}, {len(info.picks)} picks, "
        f"{info.backported} already on {info.backport_branch}"
    )
