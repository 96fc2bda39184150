"""Ids of the runs service's records: ULID-style, time-sortable, with a kind prefix.

An id is ``<prefix>_<26 characters>``: the 26 characters are 128 bits written in lowercase
Crockford base32 (no ``i``, ``l``, ``o`` or ``u``, so ids survive being read aloud or retyped), the
first 48 bits the creation time in milliseconds since the Unix epoch and the last 80 bits random
(from ``secrets``). Two ids sort as text in the order they were made, across processes to the
millisecond; within one process strictly, because an id made in the same millisecond as the
previous one takes the previous random part plus one (the ULID "monotonic" rule), which also keeps
a ``newest first`` listing stable when a client creates records in a burst.

The prefixes in use: ``ds`` (dataset build), ``lbl`` (label), ``run`` (training run) and ``mdl``
(registered model). :func:`is_id` is the strict check routes apply before any lookup, so a garbled
id is refused as an argument instead of being looked up.
"""

from __future__ import annotations

import re
import secrets
import threading
import time

#: Crockford's base32 alphabet, lowercase: digits, then letters without i, l, o, u.
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

#: The prefixes of the service's records.
PREFIXES = ("ds", "lbl", "run", "mdl")

#: Characters of the encoded part: 128 bits in 5-bit groups, rounded up (26 × 5 = 130).
BODY_LENGTH = 26

_TIMESTAMP_BITS = 48
_RANDOM_BITS = 80
_MAX_TIMESTAMP = (1 << _TIMESTAMP_BITS) - 1
_MAX_RANDOM = (1 << _RANDOM_BITS) - 1

# A prefix is a short lowercase word; the body's first character is at most "7" because the two
# extra bits of 26 base32 characters beyond 128 are always zero.
_PREFIX_RE = re.compile(r"[a-z][a-z0-9]{0,15}")
_BODY_RE = re.compile(rf"[0-7][{ALPHABET}]{{{BODY_LENGTH - 1}}}")

_lock = threading.Lock()
_last_ms = -1
_last_random = 0


def _encode(value: int) -> str:
    """The 26-character base32 spelling of a 128-bit integer, most significant digit first."""
    digits = []
    for _ in range(BODY_LENGTH):
        digits.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(digits))


def _check_prefix(prefix: str) -> None:
    if not isinstance(prefix, str) or not _PREFIX_RE.fullmatch(prefix):
        raise ValueError(f"an id prefix is a short lowercase word such as 'ds', not {prefix!r}")


def new_id(prefix: str) -> str:
    """A new id ``<prefix>_<ulid>``: later ids of this process sort after earlier ones.

    Raises ValueError for a prefix that is not a short lowercase word (a programming error, not
    a user's).
    """
    global _last_ms, _last_random
    _check_prefix(prefix)
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms > _last_ms:
            _last_ms, _last_random = now_ms, secrets.randbits(_RANDOM_BITS)
        elif _last_random < _MAX_RANDOM:
            # Same millisecond (or the clock stepped back): keep the order by counting up.
            _last_random += 1
        else:
            # 2**80 ids in one millisecond cannot happen; moving to the next one keeps the rule.
            _last_ms, _last_random = _last_ms + 1, secrets.randbits(_RANDOM_BITS)
        if _last_ms > _MAX_TIMESTAMP:
            raise OverflowError("the clock is past what a 48-bit millisecond timestamp holds")
        value = (_last_ms << _RANDOM_BITS) | _last_random
    return f"{prefix}_{_encode(value)}"


def is_id(text: object, prefix: str) -> bool:
    """Whether `text` is exactly an id of kind `prefix` as :func:`new_id` spells it.

    Strict: the prefix, one underscore, 26 lowercase Crockford characters, nothing around it (no
    whitespace, no upper case). Never raises for a wrong `text`, whatever its type.
    """
    _check_prefix(prefix)
    if not isinstance(text, str) or len(text) != len(prefix) + 1 + BODY_LENGTH:
        return False
    head, sep, body = text.partition("_")
    return head == prefix and sep == "_" and _BODY_RE.fullmatch(body) is not None


def timestamp_ms(text: str) -> int:
    """The creation time (milliseconds since the Unix epoch) encoded in an id of any prefix."""
    _head, sep, body = text.rpartition("_")
    if not sep or not _BODY_RE.fullmatch(body):
        raise ValueError(f"not a ULID-style id: {text!r}")
    value = 0
    for char in body:
        value = (value << 5) | ALPHABET.index(char)
    return value >> _RANDOM_BITS
