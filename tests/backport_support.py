"""A backport as a release branch often carries one: a fix on main and its copy on the
branch, after the branch moved the file, worded differently, with no -x line or number."""

from __future__ import annotations

from release.sample import SampleEngine


def git(engine: SampleEngine, *args: str) -> str:
    return engine.repo.out(*args)


def moved_file_backport(engine: SampleEngine) -> tuple[str, str]:
    """(a fix on main, its copy on the release branch): the branch moved the file first and
    the copy words its messages differently; no -x line, no number, another title."""
    handler = "\n\ndef empty_prompt(request):\n    prompt = request.get('prompt')\n    if not prompt:\n        return {'error': 'empty prompt', 'status': 400}\n    return None\n"
    git(engine, "switch", "--quiet", "main")
    server = engine.root / "tinyengine" / "server.py"
    server.write_text(server.read_text() + handler)
    git(engine, "commit", "--quiet", "-am", "[Bugfix] Reject empty prompts (#130)")
    fix = git(engine, "rev-parse", "HEAD")
    git(engine, "switch", "--quiet", "releases/v0.1.0")
    (engine.root / "tinyengine" / "api").mkdir()
    git(engine, "mv", "tinyengine/server.py", "tinyengine/api/server.py")
    git(engine, "commit", "--quiet", "-m", "Move the server into tinyengine/api")
    moved = engine.root / "tinyengine" / "api" / "server.py"
    moved.write_text(moved.read_text() + handler.replace("empty prompt", "prompt is empty"))
    git(engine, "commit", "--quiet", "-am", "Answer 400 when there is nothing to complete")
    return fix, git(engine, "rev-parse", "HEAD")
