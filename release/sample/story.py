"""The v0.31.0 story the rehearsal tells: a history shaped like vLLM's, on the sample engine.

Main carries PR numbers in vLLM's range, ``[Category]`` prefixes, co-authors and sign-offs,
a revert pair and a feature. Until ``[CI/Build] Skip the snapshot runtime on CUDA 12.x
images (#59118)`` every variant installs the snapshot runtime and has a snapshot session
(the rule reads ``cuda = ">=12"``); that commit, by a maintainer and co-authored, puts
``cuda = "!=12.*"`` into ``[tool.release.images.snapshot]``. It lands on main after the
cut and is picked onto ``releases/v0.31.0`` with a fix whose pick conflicts (it was
written against a rename that stays on main). Identical inputs give identical shas.

The story's engine builds for other accelerators too, as the vLLM family does: beside the
sample's three CUDA variants, a ROCm one on ``docker/Dockerfile.rocm`` (built to its stage
``final``) and a CPU one on ``docker/Dockerfile.cpu`` (:data:`OTHER_ACCELERATORS`, in its
first commit). Neither is CUDA 12.x, so the snapshot rule ``!=12.*`` takes both; before
#59118 (``>=12``, an ordered clause on CUDA) neither had a snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from release.sample import Change, SampleEngine, make_engine_repo, replace_text

__all__ = [
    "AFTER_CUT",
    "BEFORE_CUT",
    "LATE_FIX",
    "MAINTAINER",
    "OTHER_ACCELERATORS",
    "RESOLVED_SCHEDULER",
    "RULE_ALL",
    "RULE_NOT_12",
    "VERSION",
    "OwnNames",
    "make_story_engine",
]

VERSION = "0.31.0"
RULE_ALL = 'cuda = ">=12"'  # before #59118: every CUDA variant gets the snapshot runtime
RULE_NOT_12 = 'cuda = "!=12.*"'  # #59118: the CUDA 12.x variants leave it out

MAINTAINER = ("Mira Release", "mira@example.com")
WOOSUK = ("Woo Kwon", "woo@example.com")
ROGER = ("Roger Wang", "roger@example.com")
LUCIA = ("Lucia Fang", "lucia@example.com")
KAI = ("Kai Hsu", "kai@example.com")
SIGN_OFF = "Signed-off-by: {0} <{1}>"

BEFORE_CUT: tuple[Change, ...] = (
    Change(
        "[Frontend] Add --port flag to the server (#59004)",
        ROGER,
        {
            "tinyengine/server.py": replace_text(
                "    args = sys.argv[1:] if argv is None else argv\n",
                "    args = sys.argv[1:] if argv is None else argv\n"
                '    port = int(args[args.index("--port") + 1]) if "--port" in args else 8000\n',
            ),
        },
        body=f"Co-authored-by: {LUCIA[0]} <{LUCIA[1]}>\n" + SIGN_OFF.format(*ROGER),
    ),
    Change(
        "[Doc] Describe the batching policy (#59011)",
        LUCIA,
        {"README.md": lambda t: t + "\nRequests are batched in arrival order up to `max_batch`.\n"},
    ),
    Change(
        "[Kernel] Add fused add kernel stub (#59020)",
        KAI,
        {
            "tinyengine/kernels.py": '"""Kernel stubs."""\n\n\ndef fused_add(a, b):\n'
            "    return [x + y for x, y in zip(a, b)]\n",
        },
    ),
    Change(
        'Revert "[Kernel] Add fused add kernel stub (#59020)" (#59026)',
        KAI,
        {},
        revert_of="[Kernel] Add fused add kernel stub (#59020)",
    ),
    Change(
        "[Bugfix][V1] Handle an empty request list (#59031)",
        WOOSUK,
        {
            "tinyengine/scheduler.py": replace_text(
                "    batch = []\n", "    batch = []\n    if not reqs:\n        return batch\n"
            ),
        },
        body=SIGN_OFF.format(*WOOSUK),
    ),
)

AFTER_CUT: tuple[Change, ...] = (
    Change(
        "[Misc] Rename scheduler variables (#59087)",
        LUCIA,
        {
            "tinyengine/scheduler.py": lambda t: (
                t.replace("reqs", "requests")
                .replace("batch = []", "picked = []")
                .replace("len(batch)", "len(picked)")
                .replace("batch.append(req)", "picked.append(req)")
                .replace("return batch", "return picked")
            ),
        },
    ),
    Change(
        "[BugFix] Fix off-by-one in the batch limit (#59102)",
        WOOSUK,
        {
            "tinyengine/scheduler.py": replace_text(
                "if len(picked) > max_batch:", "if len(picked) >= max_batch:"
            ),
        },
        body=SIGN_OFF.format(*WOOSUK),
    ),
    Change(
        "[Feature] Add priority scheduling (#59110)",
        KAI,
        {
            "tinyengine/priority.py": '"""Priority scheduling."""\n\n\ndef by_priority(requests):\n'
            '    return sorted(requests, key=lambda r: r.get("priority", 0))\n',
        },
    ),
    Change(
        "[CI/Build] Skip the snapshot runtime on CUDA 12.x images (#59118)",
        MAINTAINER,
        {"pyproject.toml": replace_text(RULE_ALL, RULE_NOT_12)},
        body=(
            "The snapshot runtime does not suit the CUDA 12.x images, and its step is the\n"
            "slowest of their builds: the 12.x variants leave out both the build step and\n"
            "the snapshot session.\n\n"
            f"Co-authored-by: {ROGER[0]} <{ROGER[1]}>\n" + SIGN_OFF.format(*MAINTAINER)
        ),
    ),
)

LATE_FIX = Change(
    "[Bugfix] Return 400 on a malformed request body (#59140)",
    ROGER,
    {"tinyengine/server.py": lambda t: t + "\n\ndef bad_request():\n    return 400\n"},
    body=f"Co-authored-by: {WOOSUK[0]} <{WOOSUK[1]}>",
)

# #59102 picked without the #59087 rename, resolved as a maintainer would.
RESOLVED_SCHEDULER = '''"""A toy scheduler: batches requests in arrival order."""


def schedule(reqs, max_batch):
    batch = []
    if not reqs:
        return batch
    for req in reqs:
        if len(batch) >= max_batch:
            break
        batch.append(req)
    return batch
'''


# the story engine's variants of other accelerators, after the sample's CUDA ones
OTHER_ACCELERATORS = """
[[tool.release.images.variants]]
id = "rocm"
rocm = "6.4.1"
base-image = "rocm/dev-ubuntu-22.04:6.4.1"
dockerfile = "docker/Dockerfile.rocm"
target = "final"

[[tool.release.images.variants]]
id = "cpu"
cpu = true
base-image = "debian:bookworm-slim"
dockerfile = "docker/Dockerfile.cpu"
"""
_LAST_CUDA = 'base-image = "nvidia/cuda:13.0.1-base-ubuntu24.04"\n'

MULTI_ARCH = "cu129"  # the variant built for linux/amd64 and linux/arm64 (no snapshot step)
_CU129 = 'base-image = "nvidia/cuda:12.9.1-base-ubuntu22.04"\n'
_NAME = "example/tinyengine"  # the sample's image name
_DRIFT_BASE = "nvidia/cuda:13.0.1-base-ubuntu24.04"  # the cu130 base the drift step changes


@dataclass(frozen=True)
class OwnNames:
    """What a rehearsal names as its own on a shared engine: its images, and the base its
    drift step changes (a tag of the sample's base under the rehearsal's name)."""

    image: str  # [tool.release.images] name
    drift_base: str  # the drift variant's base-image


def make_story_engine(
    root: Path, *, arm64: bool = False, own: OwnNames | None = None
) -> SampleEngine:
    """The engine at ``root / "engine"`` with main up to the cut, and a bare remote;
    ``arm64``: its cu129 variant is built for linux/arm64 too (where this host emulates it);
    ``own``: the image name and the drift variant's base are these, not the sample's."""

    def before_the_rule(work: Path) -> None:
        pyproject = work / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        if RULE_NOT_12 not in text or _CU129 not in text or _LAST_CUDA not in text:
            raise ValueError(f"the sample engine's snapshot rule is not {RULE_NOT_12}")
        text = text.replace(RULE_NOT_12, RULE_ALL)
        text = text.replace(_LAST_CUDA, _LAST_CUDA + OTHER_ACCELERATORS)
        if arm64:
            text = text.replace(_CU129, _CU129 + 'platforms = ["linux/amd64", "linux/arm64"]\n')
        if own is not None:
            for was, now in ((_NAME, own.image), (_DRIFT_BASE, own.drift_base)):
                line = f'"{was}"\n'
                if text.count(line) != 1:
                    raise ValueError(f"the sample engine does not name {was} once")
                text = text.replace(line, f'"{now}"\n')
        pyproject.write_text(text, encoding="utf-8")

    engine = make_engine_repo(
        root,
        first="[Core] Add the toy scheduler and server (#58990)",
        author=WOOSUK,
        prepare=before_the_rule,
    )
    for change in BEFORE_CUT:
        engine.commit(change)
    engine.repo.run("push", "--quiet", "origin", "main")
    return engine
