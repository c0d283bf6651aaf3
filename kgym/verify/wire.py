"""Framing on the socket between the trusted parent and the candidate's process.

Parent -> child messages are pickles (the child trusts its parent). Child -> parent messages are JSON
objects of bounded size: the parent never unpickles anything the candidate could have written.
"""

from __future__ import annotations

import json
import pickle
import socket
import struct
from typing import Any

MAX_REPLY_BYTES = 8 * 1024 * 1024
_HEADER = struct.Struct("!Q")


class WireError(Exception):
    """The other side closed the socket, or sent something malformed."""


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise WireError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def _recv(sock: socket.socket, limit: int | None) -> bytes:
    (n,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if limit is not None and n > limit:
        raise WireError(f"message of {n} bytes exceeds the {limit}-byte limit")
    return _recv_exact(sock, n)


def send_command(sock: socket.socket, msg: dict[str, Any]) -> None:
    """Parent -> child."""
    _send(sock, pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))


def recv_command(sock: socket.socket) -> dict[str, Any]:
    """In the child."""
    return pickle.loads(_recv(sock, None))


def send_reply(sock: socket.socket, msg: dict[str, Any]) -> None:
    """Child -> parent."""
    _send(sock, json.dumps(msg, default=str).encode())


def recv_reply(sock: socket.socket) -> dict[str, Any]:
    """In the parent: a JSON object or WireError, never anything else."""
    raw = _recv(sock, MAX_REPLY_BYTES)
    try:
        msg = json.loads(raw)
    except ValueError as e:
        raise WireError(f"malformed reply: {e}") from None
    if not isinstance(msg, dict):
        raise WireError("malformed reply: not an object")
    return msg
