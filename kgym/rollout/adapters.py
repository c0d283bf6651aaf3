"""LoRA policy versions for a vLLM engine: each version under a fresh integer id and a fresh path,
and the staleness window that retires old ones.

Why fresh ids and paths: vLLM does not reload an adapter whose id is already loaded (a new path
under an old id keeps serving the old weights), and its prefix cache is keyed on the adapter's name
and path, so reusing either can serve stale weights or stale cached prefixes. So:
- `publish(version, path)` gives the version the next id (ids only grow, never reused), refuses a
  path or a version already published, and returns the `PolicyAdapter` to generate with;
- versions older than `window` behind the newest are retired (`retire_stale()` returns them, so the
  engine can call `remove_lora(id)`); a retired or unknown version is refused by `get` with an
  explicit `StaleVersion`, never silently served by another id;
- version 0 without a path is the base model (no adapter); an SFT adapter is simply version 0's
  path. Needs `max_loras >= window + 1` loaded at once (and >= 2: with one slot, a batch mixing a
  LoRA and the base returned wrong base outputs on vLLM CPU).
Order of events with the learner (the sync): the learner writes adapter v+1 and returns its
directory -> `publish(v+1, dir)` -> new generations use v+1, generations already running finish on
v (each sample records the version that produced it) -> `retire_stale()` -> `remove_lora` for each
retired id. Does not load anything itself and imports neither vLLM nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PolicyAdapter:
    version: int
    lora_id: int | None  # None: the base model, no adapter
    path: str | None

    @property
    def name(self) -> str:
        return f"policy-v{self.version}-id{self.lora_id}"


class StaleVersion(LookupError):
    """A version that was retired or never published."""


class AdapterRegistry:
    def __init__(self, window: int = 1, base_adapter: str | None = None):
        if window < 1:
            raise ValueError("window must be >= 1 (the newest version and at least one older one in flight)")
        self.window = window
        self._next_id = 1  # vLLM's LoRA ids are positive
        self._live: dict[int, PolicyAdapter] = {}
        self._paths: set[str] = set()
        self._retired: set[int] = set()
        self._served_ids: set[int] = set()
        self.publish(0, base_adapter)

    @property
    def latest(self) -> PolicyAdapter:
        return self._live[max(self._live)]

    @property
    def live(self) -> list[PolicyAdapter]:
        return [self._live[v] for v in sorted(self._live)]

    @property
    def retired_ids(self) -> set[int]:
        return set(self._served_ids) - {a.lora_id for a in self._live.values() if a.lora_id is not None}

    def publish(self, version: int, path: str | Path | None) -> PolicyAdapter:
        if self._live and version <= max(self._live):
            raise ValueError(f"version {version} is not newer than the latest ({max(self._live)})")
        if path is None:
            if version != 0:
                raise ValueError("only version 0 may be the base model (no adapter path)")
            adapter = PolicyAdapter(0, None, None)
        else:
            resolved = str(Path(path).resolve())
            if resolved in self._paths:
                raise ValueError(f"{resolved} was published before: give every version a fresh directory "
                                 f"(vLLM's prefix cache is keyed on the path)")
            if not (Path(resolved) / "adapter_config.json").is_file():
                raise ValueError(f"{resolved} is not a peft adapter directory (no adapter_config.json)")
            adapter = PolicyAdapter(version, self._next_id, resolved)
            self._next_id += 1
            self._paths.add(resolved)
            self._served_ids.add(adapter.lora_id)
        self._live[version] = adapter
        return adapter

    def get(self, version: int | None = None) -> PolicyAdapter:
        """The adapter of `version` (None: the latest); a retired or unknown one raises StaleVersion."""
        if version is None:
            return self.latest
        if version in self._live:
            return self._live[version]
        why = "retired (older than the staleness window)" if version in self._retired else "never published"
        raise StaleVersion(f"policy version {version} is {why}")

    def retire_stale(self) -> list[PolicyAdapter]:
        """Drop versions more than `window` behind the latest; returns them (the engine unloads their ids)."""
        newest = max(self._live)
        old = [self._live.pop(v) for v in sorted(self._live) if v < newest - self.window]
        self._retired.update(a.version for a in old)
        return old
