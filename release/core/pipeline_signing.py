"""Images signed in the generated CI (``[tool.release.ci] image-signing-key``): the jobs
that publish an rc's images and promote a final's sign them by that key, in the
containers' simple signing format (:mod:`release.images.image_signing`), and keep the
signatures as an artifact for the maintainer to serve beside the registry.

The key's fingerprint is configuration (public); its private half is a secret of the
approval environment (GitHub) or of the publishing agents (Buildkite):
``RELEASE_IMAGE_SIGNING_SECRET``, an ASCII-armoured OpenPGP secret key without a
passphrase. The step that signs imports it into a GnuPG home of its own, made for the
step and gone with the runner, and signs with it; nothing else reads it, and no line
prints it. The fingerprint and the store reach the command as ``RELEASE_IMAGE_SIGNING_KEY``
and ``RELEASE_IMAGE_SIGNATURES`` (the options' own defaults), set from literal strings.
Where the secret is missing, the import fails and nothing is published unsigned. Pure.
"""

from __future__ import annotations

from release.core.pipelines import Job, PipelinePlan

__all__ = [
    "SIGNATURES_DIR",
    "SIGNING_SECRET",
    "signatures_artifact",
    "signed",
    "signing_env",
    "signs",
]

SIGNING_SECRET = "RELEASE_IMAGE_SIGNING_SECRET"  # the armoured secret key, a CI secret
SIGNATURES_DIR = "image-signatures"  # the lookaside store, in the job's checkout
KEY_ENV = "RELEASE_IMAGE_SIGNING_KEY"  # images.publish / images.promote --sign-with
STORE_ENV = "RELEASE_IMAGE_SIGNATURES"  # their --signatures
# a GnuPG home for this step only, the secret key imported into it, the store made
_SETUP = (
    'GNUPGHOME="$(mktemp -d)" && export GNUPGHOME && '
    f"printf '%s\\n' \"${SIGNING_SECRET}\" | gpg --batch --quiet --import && "
    f'mkdir -p "${STORE_ENV}"'
)


def signs(plan: PipelinePlan, job: Job) -> bool:
    """Whether ``job`` signs images: a publish or a promote, where a key is configured."""
    return bool(plan.settings.image_signing_key) and job.kind in ("publish", "promote")


def signing_env(plan: PipelinePlan) -> dict[str, str]:
    """What the signing command reads besides the secret: the key's fingerprint and the
    store's directory, literal strings."""
    return {KEY_ENV: plan.settings.image_signing_key or "", STORE_ENV: SIGNATURES_DIR}


def signed(run: str) -> str:
    """``run`` after the key is imported, in one shell (a GitHub step's own). A failed
    import ends the shell there, whatever follows the line (``&&`` alone would not stop a
    ``bash -e`` script), so nothing is published or promoted unsigned."""
    failed = f"echo 'the signing key could not be imported from {SIGNING_SECRET}' >&2; exit 1"
    return f"if ! {{ {_SETUP}; }}; then {failed}; fi; {run}"


def signatures_artifact(job: Job) -> str:
    """The name of the artifact a signing job keeps its signatures in."""
    return f"signatures-{job.key}"
