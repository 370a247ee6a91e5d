"""DSSE envelopes (Dead Simple Signing Envelope, v1): the bytes a signature is made over,
and an envelope made and read back. Pure.

A DSSE signature is never over the payload alone but over its *pre-authentication
encoding* (PAE): ``DSSEv1 SP LEN(type) SP type SP LEN(body) SP body``, lengths in ASCII
decimal, so a signature over one payload type cannot be passed off as one over another.
An envelope is ``{"payloadType", "payload" (base64), "signatures": [{"keyid", "sig"}]}``;
here ``keyid`` is the OpenPGP key's fingerprint and ``sig`` the base64 of a binary detached
OpenPGP signature over the PAE (``gpg --detach-sign``).

An envelope read back is untrusted: a ``keyid`` is only a hint (the verifier's keyring
says who signed, never the envelope), and a signature that is not base64 is kept as
empty bytes, which no key verifies.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from release.core.json_text import parse_json
from release.errors import ExitCode, ReleaseError

__all__ = ["EnvelopeError", "Opened", "Signature", "dump", "open_envelope", "pae"]

_MAX_DEPTH = 16
_MAX_SIGNATURES = 16  # an envelope signed by more keys than this is not one of ours


class EnvelopeError(ReleaseError):
    """Bytes that are not a DSSE envelope."""

    exit_code = ExitCode.EVIDENCE


@dataclass(frozen=True)
class Signature:
    keyid: str  # who says they signed: a hint only
    sig: bytes  # the detached signature's bytes


@dataclass(frozen=True)
class Opened:
    """An envelope as read: its payload's type and bytes, and its signatures."""

    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    @property
    def signed_bytes(self) -> bytes:
        """What each signature must verify over: the PAE of the payload."""
        return pae(self.payload_type, self.payload)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding of ``payload`` of type ``payload_type``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def dump(payload_type: str, payload: bytes, signatures: Sequence[Signature] = ()) -> bytes:
    """The envelope's bytes, as attached."""
    wrapped = {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [
            {"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")} for s in signatures
        ],
    }
    return json.dumps(wrapped, sort_keys=True, indent=2).encode() + b"\n"


def _signature(entry: object) -> Signature:
    if not isinstance(entry, Mapping):
        raise EnvelopeError("the envelope lists a signature that is not an object")
    keyid, sig = entry.get("keyid", ""), entry.get("sig")
    try:
        data = base64.b64decode(sig, validate=True) if isinstance(sig, str) else b""
    except binascii.Error:
        data = b""
    return Signature(keyid if isinstance(keyid, str) else "", data)


def open_envelope(data: bytes) -> Opened:
    """The payload and signatures of an envelope's bytes; refused when it is not one."""
    try:
        outer = parse_json(data, max_depth=_MAX_DEPTH)
    except ValueError:
        raise EnvelopeError("it is not a JSON DSSE envelope") from None
    if not isinstance(outer, Mapping):
        raise EnvelopeError("it is not a JSON DSSE envelope")
    kind, signatures = outer.get("payloadType"), outer.get("signatures")
    if not isinstance(kind, str):
        raise EnvelopeError("the envelope has no payload type")
    if not isinstance(signatures, list) or len(signatures) > _MAX_SIGNATURES:
        raise EnvelopeError("the envelope has no list of signatures (or too many)")
    try:
        payload = base64.b64decode(str(outer.get("payload", "")), validate=True)
    except binascii.Error:
        raise EnvelopeError("the envelope's payload is not base64") from None
    return Opened(kind, payload, tuple(_signature(s) for s in signatures))
