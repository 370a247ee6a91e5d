"""What a failed registry request says is read from skopeo's words, not the names in them.

A repository's name is the release's own (``release-test/t4015c73d1f``, a project called
``denied``): a ``401`` or ``denied`` inside it is not the registry refusing credentials, and a
registry that never answered (connection refused) refused nothing. Each message here is the
shape skopeo prints for that failure.
"""

from __future__ import annotations

import pytest

from release.adapters.registry import failure

HOST = "127.0.0.1:34383"
UNREACHABLE = (
    'pinging container registry {host}: Get "http://{host}/v2/": dial tcp {host}: '
    "connect: connection refused"
)
REFUSED = "reading manifest rc in {host}/{name}: unauthorized: authentication required"


@pytest.mark.parametrize("name", ["rel/release-test/t4015c73d1f", "rel/denied", "rel/403/x"])
def test_a_registry_that_does_not_answer_is_unreachable_whatever_the_name(name: str) -> None:
    ref = f"{HOST}/{name}:rc"
    said = f'time=x level=fatal msg="Error parsing image name \\"docker://{ref}\\": ' + (
        UNREACHABLE.format(host=HOST) + '"'
    )
    message = str(failure(ref, f"read {ref}", said))
    assert message.startswith(f"the registry {HOST} does not answer"), message
    assert "credentials" not in message


@pytest.mark.parametrize("name", ["rel/release-test/t4015c73d1f", "rel/plain"])
def test_a_refusal_is_a_refusal_and_says_to_log_in(name: str) -> None:
    ref = f"{HOST}/{name}:rc"
    said = REFUSED.format(host=HOST, name=name)
    message = str(failure(ref, f"read {ref}", said))
    assert message.startswith(f"{HOST} refused the credentials to read {ref}"), message
    assert message.endswith(f"log in with docker login {HOST}")


def test_a_status_code_is_a_word_and_a_name_holding_one_is_not() -> None:
    ref = f"{HOST}/rel/t4015/x:rc"
    said = "writing manifest: received unexpected HTTP status: 401 Unauthorized"
    assert "refused the credentials" in str(failure(ref, "push", said))
    other = f"reading manifest rc in {HOST}/rel/t4015/x: some other trouble"
    message = str(failure(ref, "read it", other))
    assert message.startswith("cannot read it: "), message
