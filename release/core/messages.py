"""Commit messages as git writes them: where git sees a trailer block, and the ``-x`` line
``git cherry-pick -x`` adds. Pure: git's rules (``trailer.c``, ``sequencer.c``) restated,
so a message finished by hand reads exactly as one git finished.
"""

from __future__ import annotations

import re

__all__ = ["ends_with_trailer_block", "is_pick_of", "with_pick_line", "with_trailer"]

_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
_SEPARATOR = re.compile(r"[A-Za-z0-9-]+[ \t]*:")  # a "Key:" line (git's find_separator)
_CUT_LINE = "# ------------------------ >8 ------------------------\n"


def _blank(line: str) -> bool:
    return not line.strip(" \t\r\n")


def _ignored_tail(message: str) -> int:
    """How many characters at the end git ignores when it looks for trailers: trailing
    comment and blank lines, an old ``Conflicts:`` block, everything from a cut line."""
    if message.startswith(_CUT_LINE):
        cutoff = 0
    else:
        at = message.find("\n" + _CUT_LINE)
        cutoff = len(message) if at < 0 else at + 1
    start = 0  # start of the run of ignorable lines, 0 = none
    in_conflicts = False
    position = 0
    while position < cutoff:
        end = message.find("\n", position)
        following = len(message) if end < 0 else end + 1
        line = message[position:following]
        if line.startswith(("#", "\n")):
            start = start or position
        elif line == "Conflicts:\n":
            in_conflicts = True
            start = start or position
        elif in_conflicts and line.startswith("\t"):
            pass
        elif start:
            start = 0
            in_conflicts = False
        position = following
    return len(message) - start if start else len(message) - cutoff


def ends_with_trailer_block(message: str) -> bool:
    """Whether git sees a trailer block at the end of ``message``.

    git's rule (``trailer.c``, default trailer configuration): after the title
    paragraph, the last paragraph is a trailer block when all its lines are ``Key:``
    trailers, or when one line starts with a git-generated prefix (``Signed-off-by: ``,
    ``(cherry picked from commit ``) and at least a quarter of them are trailers;
    indented lines continue the trailer above them.
    """
    text = message[: len(message) - _ignored_tail(message)]
    lines = [line + "\n" for line in text.split("\n")]  # git's lines end at "\n" only
    if lines[-1] == "\n":
        lines.pop()  # text ends with a newline (or is empty): no line after it
    else:
        lines[-1] = lines[-1][:-1]
    # the title paragraph (to its first blank line, comment lines skipped) never counts
    title = 0
    while title < len(lines) and (lines[title].startswith("#") or not _blank(lines[title])):
        title += 1
    only_spaces, recognized = True, False
    trailers = others = continuations = 0
    for line in reversed(lines[title:]):
        if line.startswith("#"):
            others += continuations
            continuations = 0
            continue
        if _blank(line):
            if only_spaces:
                continue
            others += continuations
            return (recognized and trailers * 3 >= others) or (trailers > 0 and not others)
        only_spaces = False
        if line.startswith(_GIT_GENERATED):
            trailers += 1
            continuations = 0
            recognized = True
        elif _SEPARATOR.match(line):
            trailers += 1
            continuations = 0
        elif line[0] in " \t\r":
            continuations += 1
        else:
            others += 1 + continuations
            continuations = 0
    return False


def is_pick_of(message: str, sha: str) -> bool:
    """Whether ``message`` has the line ``git cherry-pick -x`` adds for ``sha``."""
    return f"(cherry picked from commit {sha})" in message


def with_pick_line(message: str, sha: str) -> str:
    """``message`` with the ``(cherry picked from commit …)`` line that ``git cherry-pick -x``
    adds: right below a trailer block that ends the message, else after a blank line."""
    text = message if message.endswith("\n") else message + "\n"
    if not ends_with_trailer_block(text):
        text += "\n"
    return f"{text}(cherry picked from commit {sha})\n"


def with_trailer(message: str, trailer: str) -> str:
    """``message`` with ``trailer`` (``Key: value``) added as ``git interpret-trailers``
    adds it: to a trailer block that ends the message, else after a blank line. Every
    other byte of ``message`` is kept (``#`` lines, trailing spaces, CRLF)."""
    text = message if message.endswith("\n") else message + "\n"
    if not ends_with_trailer_block(text):
        text += "\n"
    return f"{text}{trailer}\n"
