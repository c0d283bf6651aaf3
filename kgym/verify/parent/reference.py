"""Loading a reference module in KernelBench form (`Model`, `get_inputs`, `get_init_inputs`).

The reference is trusted (it comes from a task, not from the model), so it is imported in the
parent. It is written to a file first: some modules (and Triton) read their own source.
Bad references raise `ReferenceError` with a message naming the problem and what to do.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import traceback
from dataclasses import dataclass
from types import ModuleType


class ReferenceError(ValueError):
    """The reference source cannot be used; the message says why and what to do."""


@dataclass
class Reference:
    source: str
    sha256: str
    module: ModuleType
    path: str

    @property
    def Model(self):  # noqa: N802 - the KernelBench name
        return self.module.Model

    def get_inputs(self):
        return self.module.get_inputs()

    def get_init_inputs(self):
        return list(self.module.get_init_inputs())


_loaded: dict[str, Reference] = {}
SOURCE_DIR = tempfile.mkdtemp(prefix="kgym-ref-")  # where trusted sources are imported from


def import_source(source: str, prefix: str) -> tuple[ModuleType, str]:
    """Import trusted source text as a module from a file of its own (Triton and some modules read
    their source), named by content hash. Returns (module, path); the module's exceptions propagate."""
    sha = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = os.path.join(SOURCE_DIR, f"{prefix}_{sha}.py")
    with open(path, "w") as f:
        f.write(source)
    name = f"kgym_{prefix}_{sha}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module, path


def load_reference(source: str, origin: str = "<reference>") -> Reference:
    """Import a reference source (cached by content hash)."""
    sha = hashlib.sha256(source.encode()).hexdigest()
    if sha in _loaded:
        return _loaded[sha]
    try:
        compile(source, origin, "exec")
    except SyntaxError as e:
        raise ReferenceError(f"{origin}: syntax error at line {e.lineno}: {e.msg}") from None
    try:
        module, path = import_source(source, "reference")
    except Exception as e:  # noqa: BLE001 - report any import failure of the reference
        raise ReferenceError(f"{origin}: importing the reference failed: {type(e).__name__}: {e}\n"
                             + traceback.format_exc(limit=3)) from None
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise ReferenceError(f"{origin}: a reference must define {', '.join(missing)} "
                             "(KernelBench form: class Model, get_inputs(), get_init_inputs())")
    ref = Reference(source, sha, module, path)
    _loaded[sha] = ref
    return ref
