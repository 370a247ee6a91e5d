"""``release images.signatures``: the stores the CI's signing jobs keep (each numbering its
signatures from ``signature-1``) merged into the store served beside the registry. A copy
would overwrite one job's ``signature-1`` with another's; the merge adds each under the
next free number, once, checks every store before writing, and refuses a store that holds
anything but signatures in the store's layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

DIGEST = "sha256=" + "ab" * 32
PLACE = f"rel/tinyengine@{DIGEST}"


def store(root: Path, *signatures: bytes, place: str = PLACE) -> Path:
    directory = root / place
    directory.mkdir(parents=True)
    for n, data in enumerate(signatures, 1):
        (directory / f"signature-{n}").write_bytes(data)
    return root


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_two_jobs_signature_1_are_both_kept_and_a_rerun_adds_nothing(tmp_path: Path) -> None:
    publish = store(tmp_path / "publish", b"rc tag", b"rc index tag")
    promote = store(tmp_path / "promote", b"final tag")
    served = store(tmp_path / "served", b"rc tag")  # what was served already
    done = run_cli(tmp_path, "images.signatures", "--merge", str(publish), "--merge",
                   str(promote), "--into", str(served))  # fmt: skip
    assert done.code == 0, done.output
    assert files(served) == {
        f"{PLACE}/signature-1": b"rc tag",
        f"{PLACE}/signature-2": b"rc index tag",
        f"{PLACE}/signature-3": b"final tag",
    }
    assert "2 signature(s) added" in done.stdout + done.stderr
    again = run_cli(tmp_path, "images.signatures", "--merge", str(publish), "--merge",
                    str(promote), "--into", str(served), "--json")  # fmt: skip
    assert again.code == 0 and '"added": []' in again.stdout
    assert len(files(served)) == 3


def test_a_store_is_made_where_missing(tmp_path: Path) -> None:
    store(tmp_path / "publish", b"one", place=f"a/b/c@{DIGEST}")
    done = run_cli(tmp_path, "images.signatures", "--merge", "publish", "--into", "new")
    assert done.code == 0, done.output
    assert files(tmp_path / "new") == {f"a/b/c@{DIGEST}/signature-1": b"one"}


def _link(root: Path) -> None:
    (root / PLACE / "signature-2").symlink_to("/etc/passwd")


def _stray(root: Path) -> None:
    (root / PLACE / "notes.txt").write_text("x")


def _bad_place(root: Path) -> None:
    store(root / "x", b"y", place="../up@sha256=zz")


def _large(root: Path) -> None:
    (root / PLACE / "signature-2").write_bytes(b"x" * (1 << 17))


@pytest.mark.parametrize("spoil", [_link, _stray, _bad_place, _large])
def test_a_store_with_anything_else_is_refused_before_anything_is_written(
    tmp_path: Path, spoil: object
) -> None:
    good = store(tmp_path / "good", b"good")
    bad = store(tmp_path / "bad", b"bad")
    spoil(bad)  # type: ignore[operator]
    served = store(tmp_path / "served", b"served")
    before = files(served)
    done = run_cli(tmp_path, "images.signatures", "--merge", str(good), "--merge", str(bad),
                   "--into", str(served))  # fmt: skip
    assert done.code == 2, done.output
    assert "nothing merged" in done.stderr or "too large" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1  # one line
    assert files(served) == before  # the good store was not merged either


def test_without_a_store_to_merge_it_says_what_to_give(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "images.signatures", "--into", "served")
    assert done.code == 2 and "--merge DIR" in done.stderr
    assert not (tmp_path / "served").exists()


def test_a_target_that_is_a_file_is_refused(tmp_path: Path) -> None:
    publish = store(tmp_path / "publish", b"one")
    (tmp_path / "served").write_text("mine")
    done = run_cli(tmp_path, "images.signatures", "--merge", str(publish), "--into", "served")
    assert done.code == 2 and (tmp_path / "served").read_text() == "mine"
