"""`SyncRunner`: calling the async episode code from synchronous code, on a private event loop.

TRL 1.16's GRPOTrainer calls an environment's tool methods and the reward function as plain
functions, on the trainer's thread, with no event loop running. Each object that must answer such a
call (a `KgymToolEnv`, a `KgymReward`) owns one `SyncRunner`: its loop is created on first use,
runs one coroutine to completion per call (`run_until_complete`) and is closed with the object.
A private loop, rather than `asyncio.run` per call, keeps loop-bound state (the verdict cache's
in-flight verifications) valid across the calls of one object; evaluators shared between objects
must work from several loops (`LocalEvaluator` and `CachedEvaluator` do).

Called from inside a running event loop it refuses (it would block that loop): async code awaits
the env and tools directly. Does not run anything concurrently: for that, use the async API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class SyncRunner:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError("a synchronous kgym call inside a running event loop: await the async API instead")
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        if self._loop is not None and not self._loop.is_closed() and not self._loop.is_running():
            self._loop.close()
        self._loop = None

    def __del__(self) -> None:
        self.close()
