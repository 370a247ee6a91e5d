"""A blob mounted from one repository into another of the same registry: the Distribution
API's cross-repository mount (``POST /v2/<name>/blobs/uploads/?mount=<digest>&from=<repo>``),
so a copy between repositories of one host sends no layer through this machine.

skopeo mounts only blobs its own cache has seen in the source repository (it has not seen
what ``docker push`` put there), so the mounts are asked for here first; skopeo then finds
each blob in place and sends only the manifest. A mount is a help: one the registry does
not do (202: it began an upload instead, which is cancelled), or cannot be asked for, is
False, and the copy streams that blob as it would have.

Plain HTTP only to a registry on loopback, as everywhere else; verified TLS otherwise. A
registry that wants a token gets one from the challenge's realm, anonymously or with the
user's own ``docker login`` (the ``auth`` of ``~/.docker/config.json``; a credential
helper's secrets are not read here: then the blob is streamed). Nothing of it is printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from release.adapters.registry import is_loopback

__all__ = ["mount_blob"]

TIMEOUT = 30.0
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')


def _basic(host: str) -> str | None:
    """The user's ``docker login`` for ``host`` as a Basic credential, where it is kept in
    docker's file itself."""
    config = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker") / "config.json"
    try:
        auths = json.loads(config.read_text("utf-8")).get("auths") or {}
        auth = (auths.get(host) or auths.get(f"https://{host}") or {}).get("auth")
    except (OSError, ValueError, AttributeError):
        return None
    return f"Basic {auth}" if isinstance(auth, str) and auth else None


def _token(challenge: str, host: str) -> str | None:
    """A Bearer token for the challenge ``WWW-Authenticate`` gave, or None."""
    if not challenge.lower().startswith("bearer "):
        return None
    fields = dict(_CHALLENGE.findall(challenge))
    realm = fields.pop("realm", "")
    if not realm.startswith("https://") and not (realm.startswith("http://") and is_loopback(host)):
        return None
    request = urllib.request.Request(f"{realm}?{urllib.parse.urlencode(fields)}")
    basic = _basic(host)
    if basic:
        request.add_header("Authorization", basic)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            document = json.loads(answer.read())
    except (OSError, ValueError):
        return None
    token = document.get("token") or document.get("access_token")
    return f"Bearer {token}" if isinstance(token, str) else None


def _post(url: str, auth: str | None) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, data=b"", method="POST")
    if auth:
        request.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return answer.status, dict(answer.headers)
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers or {})


def _cancel(base: str, location: str, auth: str | None) -> None:
    """An upload the registry began instead of mounting, cancelled (it would expire)."""
    request = urllib.request.Request(urllib.parse.urljoin(base, location), method="DELETE")
    if auth:
        request.add_header("Authorization", auth)
    with contextlib.suppress(OSError):
        urllib.request.urlopen(request, timeout=TIMEOUT).close()


def mount_blob(host: str, repository: str, source: str, digest: str) -> bool:
    """Whether the blob ``digest`` of ``source`` is now in ``repository`` (both of ``host``),
    mounted by the registry."""
    base = f"{'http' if is_loopback(host + '/x') else 'https'}://{host}"
    query = urllib.parse.urlencode({"mount": digest, "from": source})
    url = f"{base}/v2/{repository}/blobs/uploads/?{query}"
    try:
        status, headers = _post(url, None)
        if status == 401:
            auth = _token(
                headers.get("Www-Authenticate") or headers.get("WWW-Authenticate") or "", host
            )
            if auth is None:
                return False
            status, headers = _post(url, auth)
        else:
            auth = None
    except OSError:
        return False
    if status == 202 and headers.get("Location"):
        _cancel(base, headers["Location"], auth)
    return status == 201
