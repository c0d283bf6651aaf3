"""Free loopback ports outside Ray's reserved 10002-19999 (as tests/farm/test_jobs.py picks them)."""

from __future__ import annotations

import socket


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    while len(ports) < n:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        if not 10002 <= port <= 19999:
            ports.append(port)
        socks.append(s)
    for s in socks:
        s.close()
    return ports
