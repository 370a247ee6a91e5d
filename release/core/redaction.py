"""Secrets taken out of text before anyone sees it. Pure.

What git, docker and skopeo say quotes what they were given: a remote's URL with its
token (``https://x-access-token:...@github.com/...``), a registry reference with a
password in it, an ``Authorization`` header git was handed, a password a login echoed.
Shown as it came, it lands in a terminal, and in CI in a log anyone with read access to
the pipeline reads. :func:`redacted` replaces each such secret with ``***``:

- userinfo in a URL: the password (``https://user:***@host``), and all of it where a
  web URL has a user only, since a token often stands there (``https://***@github.com``);
  ``ssh://git@host`` names a user, not a secret, and is kept;
- userinfo before a registry host without a scheme (``user:***@127.0.0.1:5000/org``),
  but not a tag before a digest (``ubuntu:22.04@sha256:...``);
- ``x-access-token:...``, GitHub's token shapes (``ghp_...``, ``github_pat_...``), and
  the credentials of an ``Authorization: Basic|Bearer|Token ...`` header;
- every value of ``known`` (a password of this run) of at least :data:`SHORTEST`
  characters, wherever it stands.

Invariants: text with none of these is returned as it is; redacting twice gives what
redacting once gives; nothing but the secret itself is replaced, so a line still says
what failed and where.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from release.core.patterns import lazy_pattern

__all__ = ["MASK", "SECRET_ENV", "SHORTEST", "redacted"]

MASK = "***"
# a shorter known value would blank ordinary words and guard nothing a guess would not find
SHORTEST = 4
# where a run's secrets come from: the registry password CI hands to docker login (the
# pipelines' REGISTRY_PASSWORD, a test holds the two in step) and the tokens git and gh use
SECRET_ENV = ("RELEASE_REGISTRY_PASSWORD", "GITHUB_TOKEN", "GH_TOKEN")

_NOT_URL = r"\s/@'\"<>"
_URL_USERINFO = lazy_pattern(
    rf"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^{_NOT_URL}:]*)(?P<password>:[^{_NOT_URL}]*)?@"
)
_BARE_USERINFO = lazy_pattern(
    rf"(?<![\w.+%:/-])(?P<user>[\w.%+-]+):(?P<password>[^{_NOT_URL}:]+)@(?!sha(?:256|384|512):)(?=[\w\[])"
)
_ACCESS_TOKEN = lazy_pattern(rf"(?P<lead>\bx-access-token:)[^{_NOT_URL}]+", re.IGNORECASE)
_GITHUB_TOKEN = lazy_pattern(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b")
_AUTHORIZATION = lazy_pattern(
    r"(?P<lead>\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)\s+)[^\s\"',;]+",
    re.IGNORECASE,
)
_WEB = ("http://", "https://")


def _url(match: re.Match[str]) -> str:
    scheme, user, password = match["scheme"], match["user"], match["password"]
    if password:
        return f"{scheme}{user}:{MASK}@"
    if scheme.lower() in _WEB and user and user != MASK:
        return f"{scheme}{MASK}@"
    return match.group()


def redacted(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with every secret it holds replaced by :data:`MASK`: the shapes above, and
    each value of ``known`` (the longest first, so one that holds another goes whole). Each
    shape is looked for only where the text holds what it needs (an ``@``, a ``_``, the
    header's name): every line the tool prints comes through here."""
    for value in sorted({k for k in known if len(k) >= SHORTEST}, key=len, reverse=True):
        text = text.replace(value, MASK)
    token = _holds(text, "x-access-token", 0, 2)
    if len(text) > _LONG and "\n" in text:
        # A long text (a document: the notes of a long history) is looked through line by
        # line, and only the lines that hold what a shape needs: these shapes never span a
        # line (none matches a newline), and their regexes cost a step at every character.
        text = _by_line(text, token)
    else:
        text = _line_shapes(text, token)
    if _holds(text, "authorization", 7):  # (spans lines: "Authorization:\n Bearer ...")
        text = _AUTHORIZATION.sub(lambda m: m["lead"] + MASK, text)
    return text


_LONG = 4096  # characters: a shorter text gets one pass of each regex
_TOKEN_HEADS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")  # _GITHUB_TOKEN's


def _by_line(text: str, token: bool) -> str:
    """:func:`_line_shapes` of each line of ``text`` that may hold a shape: one with an
    ``@``, a token's head, or (``token``) the access token's name; the others are not
    looked at (found by where the characters these need stand)."""
    starts: set[int] = set()
    for char in ("@", "_", "x", "X") if token else ("@", "_"):
        at = text.find(char)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at)
            at = -1 if end < 0 else text.find(char, end)
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if (
            "@" in line
            or ("_" in line and any(head in line for head in _TOKEN_HEADS))
            or (token and _holds(line, "x-access-token", 0, 2))
        ):
            changed = _line_shapes(line, token)
            if changed != line:
                pieces += [text[done:start], changed]
                done = end
    return "".join([*pieces, text[done:]]) if pieces else text


def _holds(text: str, word: str, at: int, width: int = 1) -> bool:
    """Whether ``word`` (lower case) is in ``text.lower()``, without lower-casing all of a
    long text (which costs more than the rest of :func:`redacted`): only around each
    place where its ``width`` letters at ``at`` stand, in any case.

    Exact for the letters used here ("x-", "z", and the "a" after them): only a letter and
    its capital lower-case to a text that holds it, and the one character that lower-cases
    to more than one ("İ": a dotted "i") is in no match, so a match is as many characters
    of ``text`` as ``word`` has (the tests check both over every code point).
    """
    after, following = len(word) - at, word[at + width]
    nearby = (following, following.upper())  # (a quick test before the whole window's)
    for variant in _cases(word[at : at + width]):
        start = text.find(variant, at)
        while start >= 0:
            if text[start + width : start + width + 1] in nearby and (
                text[start - at : start + after].lower() == word
            ):
                return True
            start = text.find(variant, start + 1)
    return False


def _cases(letters: str) -> set[str]:
    """``letters`` in every mix of lower and upper case."""
    spellings = {""}
    for letter in letters:
        spellings = {s + c for s in spellings for c in (letter, letter.upper())}
    return spellings


def _line_shapes(text: str, token: bool) -> str:
    """``text`` with the shapes no line break is part of replaced (``token``: whether the
    whole text holds ``x-access-token`` in some case)."""
    if "@" in text:
        text = _URL_USERINFO.sub(_url, text)
        text = _BARE_USERINFO.sub(lambda m: f"{m['user']}:{MASK}@", text)
    if token:
        text = _ACCESS_TOKEN.sub(lambda m: m["lead"] + MASK, text)
    if "_" in text:
        text = _GITHUB_TOKEN.sub(MASK, text)
    return text
