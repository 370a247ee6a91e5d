"""Signed tags and manifests: ``tag --sign`` and ``manifest`` sign with the maintainer's git
signing key (SSH or OpenPGP); ``check --tag`` and ``reproduce`` verify against trust roots
the tester holds, and refuse (exit 7, nothing built) what does not verify.

Every key is made here, in the test's own directories (``ssh-keygen -t ed25519``; GPG in a
temporary ``GNUPGHOME`` whose agent is stopped afterwards); the repositories are real, with
a bare remote. The refusals of ``reproduce`` come before any engine is asked: past them the
run stops at the engine that does not answer (``DOCKER_HOST`` names no socket), exit 6.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.adapters.git import GitRepo
from release.adapters.git_notes import SIGNATURE_FILE, note_bytes, notes_ref, read_signature
from release.core.signatures import SignatureState, TagTrust, Verification, split_tag
from release.flows.signatures import sign_manifest
from release.sample import SampleEngine, make_sample_engine
from release.sample.rehearse_signing import Keys, tampered_note_refused
from release.sample.rehearse_terminal import Terminal
from tests.conftest import cut, repo_state, run_cli
from tests.docker_support import recording_client
from tests.manifest_support import all_parts, tagged
from tests.reproduce_support import NO_ENGINE, SNAPSHOT_OPTIONS, clone_of, faithful, note

pytestmark = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None or shutil.which("gpg") is None,
    reason="ssh-keygen and gpg sign and verify here",
)

TAG = "v0.1.0rc1"
MAINTAINER = "maintainer@example.com"


def ssh_key(where: Path, principal: str) -> tuple[Path, str]:
    """A new ed25519 key in ``where``; its path and its allowed-signers line."""
    where.mkdir(parents=True, exist_ok=True)
    key = where / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(key)],
        check=True, capture_output=True,
    )  # fmt: skip
    return key, f"{principal} {key.with_suffix('.pub').read_text(encoding='utf-8')}"


def allowed_signers(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def signing_with(repo: GitRepo, key: Path) -> None:
    repo.run("config", "gpg.format", "ssh")
    repo.run("config", "user.signingkey", str(key.with_suffix(".pub")))


def sign_note(repo: GitRepo, tag: str) -> str:
    commit = repo.rev(f"refs/tags/{tag}")
    assert commit is not None
    said = sign_manifest(repo, tag, commit, written=True)
    assert said is not None and "signed" in said
    return commit


def tamper(repo: GitRepo, tag: str) -> None:
    """The note's bytes changed after signing, the signature kept beside it."""
    commit = repo.rev(f"refs/tags/{tag}")
    assert commit is not None
    text = note_bytes(repo, tag, commit)
    assert text is not None and read_signature(repo, tag) is not None
    note(repo, tag, text.replace('"passed"', '"failed"', 1))
    assert note_bytes(repo, tag, commit) != text and read_signature(repo, tag) is not None


def check_tag(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``release check --tag TAG ARGS``: its exit code and output, the repository as it was."""
    before = repo_state(root)
    result = run_cli(root, "check", "--tag", TAG, *args, env=env)
    assert repo_state(root) == before, result.output
    return result.code, result.output


# -- the maintainer's side: manifest signs the note --------------------------------


@pytest.fixture
def signed_rc(cut_engine_copy: SampleEngine, tmp_path: Path) -> tuple[SampleEngine, Path]:
    """The rc tagged with ``git tag --sign`` by an SSH key, its manifest recorded (and so
    signed) by ``release manifest``; the maintainer's allowed-signers file."""
    engine = cut_engine_copy
    key, line = ssh_key(tmp_path / "maintainer-key", MAINTAINER)
    signing_with(engine.repo, key)
    release, parts = tagged_after_signing(engine)
    all_parts(engine, parts, release)
    made = run_cli(engine.root, "manifest")
    assert made.code == 0, made.output
    assert f"manifest of {TAG} signed (ssh key {key}.pub)" in made.stdout
    return engine, allowed_signers(tmp_path / "allowed_signers", line)


def tagged_after_signing(engine: SampleEngine) -> tuple[object, Path]:
    """:func:`tests.functional.test_manifest_flow.tagged`, the tag signed as git is configured."""
    engine.repo.run("config", "tag.gpgSign", "true")  # git tag -a then signs, as -s
    return tagged(engine)  # type: ignore[return-value]


def test_a_signed_tag_and_manifest_verify_as_signed_by_the_signer(
    signed_rc: tuple[SampleEngine, Path],
) -> None:
    engine, allowed = signed_rc
    assert "-----BEGIN SSH SIGNATURE-----" in engine.repo.out("cat-file", "tag", TAG)
    tree = engine.repo.out("ls-tree", "--name-only", notes_ref(TAG))
    assert SIGNATURE_FILE in tree.split()
    code, out = check_tag(engine.root, "--trust", str(allowed), "--require-signed")
    assert code == 0, out
    assert f"tag signature: tag {TAG}: signed by {MAINTAINER}" in out
    assert f"manifest signature: manifest of {TAG}: signed by {MAINTAINER}" in out
    # the tester's own git config names the allowed signers just as well
    engine.repo.run("config", "gpg.ssh.allowedSignersFile", str(allowed))
    code, out = check_tag(engine.root, "--require-signed")
    assert code == 0 and f"manifest of {TAG}: signed by {MAINTAINER}" in out, out
    # recording the same manifest again keeps its signature (no new notes commit)
    tip = engine.repo.rev(notes_ref(TAG))
    again = run_cli(engine.root, "manifest")
    assert "already recorded" in again.stdout and engine.repo.rev(notes_ref(TAG)) == tip


def test_a_note_changed_after_signing_does_not_verify_exit_7(
    signed_rc: tuple[SampleEngine, Path],
) -> None:
    engine, allowed = signed_rc
    tamper(engine.repo, TAG)
    code, out = check_tag(engine.root, "--trust", str(allowed))
    assert code == 7, out
    assert f"manifest of {TAG}: signature does not verify" in out
    assert "changed after signing" in out


def test_a_signature_by_a_key_the_tester_does_not_allow_does_not_verify(
    signed_rc: tuple[SampleEngine, Path], tmp_path: Path
) -> None:
    engine, _ = signed_rc
    _, stranger = ssh_key(tmp_path / "other", "someone@example.com")
    theirs = allowed_signers(tmp_path / "tester_allowed", stranger)
    code, out = check_tag(engine.root, "--trust", str(theirs))
    assert code == 7, out
    assert f"tag {TAG}: signature does not verify (its key is not one {theirs} allows)" in out


def test_unsigned_is_said_and_refused_only_with_require_signed(
    cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine_copy
    release, parts = tagged(engine)
    all_parts(engine, parts, release)
    made = run_cli(engine.root, "manifest")
    assert "unsigned (no signing configured" in made.stdout, made.output
    assert read_signature(engine.repo, TAG) is None
    _, line = ssh_key(tmp_path / "k", MAINTAINER)
    allowed = allowed_signers(tmp_path / "allowed_signers", line)
    code, out = check_tag(engine.root, "--trust", str(allowed))
    assert code == 0, out
    assert f"tag {TAG}: unsigned" in out and f"manifest of {TAG}: unsigned" in out
    code, out = check_tag(engine.root, "--trust", str(allowed), "--require-signed")
    assert code == 7, out
    assert f"tag {TAG}: unsigned; manifest of {TAG}: unsigned (--require-signed)" in out


def test_a_signature_with_no_trust_root_is_not_verified_and_refused_when_required(
    signed_rc: tuple[SampleEngine, Path],
) -> None:
    engine, _ = signed_rc
    code, out = check_tag(engine.root)
    assert code == 0, out
    assert f"tag {TAG}: signed, not verified (ssh: name your allowed-signers file" in out
    assert "signed by" not in out
    code, out = check_tag(engine.root, "--require-signed")
    assert code == 7 and "signed, not verified" in out, out


def test_a_trust_root_in_the_repositorys_tree_is_never_read(
    cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    """Whoever can push commits an allowed-signers file naming their own key and signs the
    tag with it: it is never taken as the tester's, however it is named."""
    engine = cut_engine_copy
    key, line = ssh_key(tmp_path / "attacker", MAINTAINER)
    allowed_signers(engine.root / "allowed_signers", line)
    (engine.root / ".gitallowedsigners").write_text(line, encoding="utf-8")
    engine.repo.run("add", "allowed_signers", ".gitallowedsigners")
    engine.repo.run("commit", "--quiet", "-m", "[Misc] signers (#300)")
    signing_with(engine.repo, key)
    release, parts = tagged_after_signing(engine)
    all_parts(engine, parts, release)
    assert run_cli(engine.root, "manifest").code == 0
    engine.repo.run("config", "--unset", "user.signingkey")  # the tester's side now
    code, out = check_tag(engine.root)
    assert code == 0 and "signed, not verified" in out and "signed by" not in out, out
    code, out = check_tag(engine.root, "--require-signed")
    assert code == 7 and "signed by" not in out, out
    code, out = check_tag(engine.root, "--trust", "allowed_signers")
    assert code == 2 and "inside this repository's work tree" in out, out
    engine.repo.run("config", "gpg.ssh.allowedSignersFile", str(engine.root / "allowed_signers"))
    code, out = check_tag(engine.root)
    assert code == 2 and "gpg.ssh.allowedSignersFile is inside" in out, out


def test_a_failed_signing_leaves_the_notes_as_they_were(
    cut_engine_copy: SampleEngine, tmp_path: Path
) -> None:
    engine = cut_engine_copy
    release, parts = tagged(engine)
    all_parts(engine, parts, release)
    signing_with(engine.repo, tmp_path / "no-such-key")
    before = repo_state(engine.root)
    failed = run_cli(engine.root, "manifest")
    assert failed.code == 3 and "signing with ssh-keygen failed" in failed.stderr, failed.output
    assert repo_state(engine.root) == before


# -- OpenPGP ------------------------------------------------------------------------


@pytest.fixture
def gnupg(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A GNUPGHOME of its own with a new key (no passphrase); its fingerprint. Short path:
    the agent's socket is made in it."""
    home = Path(tempfile.mkdtemp(prefix="gpg-", dir="/tmp"))
    home.chmod(0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        subprocess.run(
            ["gpg", "--batch", "--passphrase", "", "--quick-gen-key",
             f"Test Maintainer <{MAINTAINER}>", "ed25519", "default", "never"],
            check=True, capture_output=True,
        )  # fmt: skip
        listed = subprocess.run(
            ["gpg", "--batch", "--with-colons", "--list-secret-keys"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        fpr = next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))
        yield home, fpr
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], check=False)
        shutil.rmtree(home, ignore_errors=True)


def exported(home: Path, fpr: str, out: Path) -> Path:
    data = subprocess.run(
        ["gpg", "--batch", "--homedir", str(home), "--export", fpr],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    out.write_bytes(data)
    return out


def test_an_openpgp_signed_tag_and_manifest_verify_against_the_testers_keyring(
    cut_engine_copy: SampleEngine, gnupg: tuple[Path, str], tmp_path: Path
) -> None:
    engine = cut_engine_copy
    home, fpr = gnupg
    engine.repo.run("config", "user.signingkey", fpr)
    release, parts = tagged_after_signing(engine)
    assert "-----BEGIN PGP SIGNATURE-----" in engine.repo.out("cat-file", "tag", TAG)
    all_parts(engine, parts, release)
    made = run_cli(engine.root, "manifest")
    assert f"manifest of {TAG} signed (openpgp key {fpr})" in made.stdout, made.output
    keyring = exported(home, fpr, tmp_path / "maintainer.gpg")
    code, out = check_tag(engine.root, "--trust", str(keyring), "--require-signed")
    assert code == 0, out
    assert f"manifest of {TAG}: signed by Test Maintainer <{MAINTAINER}>" in out
    # a keyring of another key: the same signatures do not verify
    other = tmp_path / "other-gnupg"
    other.mkdir(mode=0o700)
    subprocess.run(
        ["gpg", "--batch", "--homedir", str(other), "--passphrase", "", "--quick-gen-key",
         "Someone <someone@example.com>", "ed25519", "default", "never"],
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        theirs = exported(other, "someone@example.com", tmp_path / "other.gpg")
    finally:
        subprocess.run(["gpgconf", "--homedir", str(other), "--kill", "all"], check=False)
    code, out = check_tag(engine.root, "--trust", str(theirs))
    assert code == 7 and f"its key is not in {theirs}" in out, out
    tamper(engine.repo, TAG)
    code, out = check_tag(engine.root, "--trust", str(keyring))
    assert code == 7 and f"manifest of {TAG}: signature does not verify" in out, out


# -- reproduce: verified before anything is pulled or built -------------------------


def signed_and_published(root: Path, key: Path) -> SampleEngine:
    """The release branch tagged v0.1.0rc1 with ``key``, its faithful manifest signed, both
    pushed (``release push`` sends the notes ref, the signature in it)."""
    engine = cut(make_sample_engine(root))
    signing_with(engine.repo, key)
    engine.repo.run("tag", "-s", TAG, "-m", TAG)
    note(engine.repo, TAG, json.dumps(faithful(engine.repo, TAG, "0.1.0rc1"), indent=2) + "\n")
    sign_note(engine.repo, TAG)
    engine.repo.run("push", "--quiet", "origin", TAG, f"+{notes_ref(TAG)}")
    return engine


@pytest.fixture
def signed_release(tmp_path: Path) -> tuple[SampleEngine, Path, Path]:
    """The maintainer's repository, a tester's clone and the tester's allowed signers."""
    key, line = ssh_key(tmp_path / "maintainer-key", MAINTAINER)
    engine = signed_and_published(tmp_path / "maintainer", key)
    allowed = allowed_signers(tmp_path / "allowed_signers", line)
    return engine, clone_of(engine, tmp_path / "tester"), allowed


def reproduce(root: Path, *args: str) -> tuple[int, str]:
    before = repo_state(root)
    result = run_cli(root, "reproduce", TAG, *args, env=NO_ENGINE)
    assert repo_state(root) == before, result.output
    return result.code, result.output


def test_reproduce_says_who_signed_and_refuses_a_tampered_note_before_building(
    signed_release: tuple[SampleEngine, Path, Path],
) -> None:
    engine, tester, allowed = signed_release
    trust = ("--trust", str(allowed), "--allow-host", SNAPSHOT_OPTIONS)
    code, out = reproduce(tester, *trust, "--require-signed")
    assert code == 6 and "no Docker Engine" in out, out  # past every check: the engine
    assert f"tag {TAG}: signed by {MAINTAINER}" in out
    assert f"manifest of {TAG}: signed by {MAINTAINER}" in out
    tamper(engine.repo, TAG)
    engine.repo.run("push", "--quiet", "--force", "origin", f"+{notes_ref(TAG)}")
    code, out = reproduce(tester, *trust)
    assert code == 7, out
    assert f"manifest of {TAG}: signature does not verify" in out and "nothing was built" in out
    assert "no Docker Engine" not in out


def test_reproduce_refuses_unsigned_only_with_require_signed(
    tmp_path: Path,
) -> None:
    engine = cut(make_sample_engine(tmp_path / "maintainer"))
    engine.repo.run("tag", "-a", TAG, "-m", TAG)
    note(engine.repo, TAG, json.dumps(faithful(engine.repo, TAG, "0.1.0rc1"), indent=2) + "\n")
    engine.repo.run("push", "--quiet", "origin", TAG, f"+{notes_ref(TAG)}")
    tester = clone_of(engine, tmp_path / "tester")
    code, out = reproduce(tester, "--allow-host", SNAPSHOT_OPTIONS)
    assert code == 6 and f"tag {TAG}: unsigned" in out, out
    code, out = reproduce(tester, "--allow-host", SNAPSHOT_OPTIONS, "--require-signed")
    assert code == 7 and "(--require-signed): nothing was built" in out, out


def test_a_trusted_signers_host_options_are_allowed_said_and_recorded(
    signed_release: tuple[SampleEngine, Path, Path],
) -> None:
    _, tester, allowed = signed_release
    code, out = reproduce(tester, "--trust", str(allowed))
    assert code == 3 and "add --allow-host" in out, out  # signed, but its signer not trusted
    code, out = reproduce(tester, "--trust", str(allowed), "--allow-host-signed-by", "x@y.z")
    assert code == 3 and "add --allow-host" in out, out
    code, out = reproduce(tester, "--trust", str(allowed), "--allow-host-signed-by", MAINTAINER)
    assert code == 6, out
    assert f"allowed {SNAPSHOT_OPTIONS}: {TAG} is signed by {MAINTAINER}, whose host" in out
    # once, in the tester's own git config, for every run
    GitRepo(tester).run("config", "release.allowHostSignedBy", MAINTAINER)
    code, out = reproduce(tester, "--trust", str(allowed))
    assert code == 6 and f"is signed by {MAINTAINER}, whose host options" in out, out
    # not where the signature is not verified: no trust root, no consent by signer
    code, out = reproduce(tester)
    assert code == 3 and "signed, not verified" in out and "add --allow-host" in out, out


def test_the_rehearsals_changed_note_is_refused_and_put_back(
    signed_release: tuple[SampleEngine, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rehearsal's step, on its own: the maintainer's note changed on the remote, the
    tester's reproduce refused (exit 7, before the engine), the note put back."""
    engine, tester, allowed = signed_release
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE["DOCKER_HOST"])
    said: list[str] = []
    t = Terminal(said.append, tmp_path)
    keys = Keys(tmp_path / "maintainer-key" / "id_ed25519", allowed)
    remote = GitRepo(tester).remotes.refs("origin", notes_ref(TAG))[notes_ref(TAG)].sha
    tampered_note_refused(t, engine.repo, tester, TAG, keys, SNAPSHOT_OPTIONS)
    assert [(c.ok, c.what) for c in t.checks] == [
        (True, f"a note changed after signing: the tester's reproduce of {TAG} refuses it "
         "(exit 7)"),
    ], said  # fmt: skip
    assert any(f"manifest of {TAG}: signature does not verify" in line for line in said)
    assert GitRepo(tester).remotes.refs("origin", notes_ref(TAG))[notes_ref(TAG)].sha == remote
    assert engine.repo.rev(notes_ref(TAG)) == remote


# what asks the engine to make an image or a container (the client's own words for it)
MAKES = {"build", "buildx", "builder", "run", "create", "pull", "tag", "load", "import", "commit"}


@pytest.mark.images
def test_a_refused_reproduce_creates_no_image_and_no_container(
    docker: object, signed_release: tuple[SampleEngine, Path, Path], tmp_path: Path
) -> None:
    """Nothing is asked of the engine that makes an image or a container: every command the
    run sends it is recorded by a client in front of the real one (the engine is shared
    with tests building at the same time, so its lists of images say nothing here)."""
    engine, tester, allowed = signed_release
    tamper(engine.repo, TAG)
    engine.repo.run("push", "--quiet", "--force", "origin", f"+{notes_ref(TAG)}")
    real = shutil.which(os.environ.get("DOCKER", "docker"))
    assert real is not None
    env, sent = recording_client(tmp_path / "client", real)
    # the recording client is the one a command uses: check asks the engine through it
    run_cli(tester, "check", env=env)
    assert sent.is_file() and sent.read_text().strip(), "the recording client was not used"
    sent.unlink()

    result = run_cli(tester, "reproduce", TAG, "--trust", str(allowed),
                     "--allow-host", SNAPSHOT_OPTIONS, env=env)  # fmt: skip
    assert result.code == 7, result.output
    assert "signature does not verify" in result.stderr
    calls = sent.read_text().splitlines() if sent.is_file() else []
    words = [call.split() for call in calls]
    made = [c for c, w in zip(calls, words, strict=True) if MAKES & set(w[:2])]
    assert made == [], calls  # no image made, no container


# -- the verdicts, as values ----------------------------------------------------------


def test_the_verdicts_refuse_bad_always_and_unverified_only_when_required() -> None:
    good = Verification("tag t", SignatureState.SIGNED, "a")
    bad = Verification("manifest of t", SignatureState.BAD, detail="changed")
    plain = Verification("manifest of t", SignatureState.UNSIGNED)
    assert TagTrust(good, None).refusal(True) is None
    assert TagTrust(good, plain).refusal(False) is None
    assert TagTrust(good, plain).refusal(True) == (
        "manifest of t: unsigned (--require-signed): nothing was built"
    )
    assert TagTrust(good, bad).refusal(False) == (
        "manifest of t: signature does not verify (changed): nothing was built"
    )
    assert TagTrust(Verification("tag t", SignatureState.UNVERIFIED), None).signer() is None
    assert TagTrust(good, bad).signer() == "a"


def test_a_tag_object_splits_at_its_last_signature_line() -> None:
    body = "object 1\ntype commit\ntag t\ntagger x\n\nmessage\n"
    sig = "-----BEGIN SSH SIGNATURE-----\nabc\n-----END SSH SIGNATURE-----\n"
    found = split_tag(body + sig)
    assert found is not None and found.payload == body and found.signature == sig
    assert split_tag(body) is None
