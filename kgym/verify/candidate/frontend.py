"""On the CPU, a kernel counts only if a GPU build would accept it: Triton's front end runs on each one.

With TRITON_INTERPRET=1 (every CPU verification) Triton does not compile a kernel: its interpreter runs
the kernel's Python body with `tl` patched to numpy, so anything Python allows runs in it. A loaded
value's `.handle.data` is the numpy array behind it (`arr[arr < 0] = 0` is a ReLU on the host),
host helpers and Python control flow on data values run too; none of it is Triton, and a GPU build
rejects all of it at compile time. Without this rule such an answer passed every CPU gate with the
static policy on (`handle` and `data` are ordinary attribute names) and earned the CPU reward.

`FrontendCheck.check` lowers a kernel to Triton IR (TTIR) for a CUDA target the way
`JITFunction.run` would before compiling: the same signature types (`mangle_type`), constexprs and
launch options, Triton's own code generator (`ASTSource.make_ir`), with no GPU needed (no backend
pass, no ptxas). Jitted helpers the kernel calls are lowered with it (the interpreter's wrappers in
its globals are replaced by compiler ones). Once per kernel and specialization; a kernel the front
end rejects is a `compile` failure. Cost: ~5-15 ms per distinct kernel specialization on the CPU.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

_TARGET_ARCH = 90  # an H200's: the front end's output hardly depends on it
_MISSING = object()


def _frontend_function_class() -> type:
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    class FrontendFunction(JITFunction):
        """A compiler-side JITFunction for a function the interpreter wraps; jitted helpers it calls
        (interpreter wrappers in its globals) are lowered as compiler-side functions too."""

        made: list[tuple[Any, Any]] = []  # (python function, FrontendFunction), compared by identity

        @classmethod
        def of(cls, python_fn: Any) -> Any:
            for fn, made in cls.made:
                if fn is python_fn:
                    return made
            made = cls(python_fn)
            cls.made.append((python_fn, made))
            return made

        # JITCallable keeps the function's globals as `__globals__` (its dependency hash and the code
        # generator read them): seen through this property, with compiler-side functions.
        @property
        def __globals__(self) -> dict:
            return _compiled(self._raw_globals)

        @__globals__.setter
        def __globals__(self, value: dict) -> None:
            self._raw_globals = value

        def get_capture_scope(self) -> dict:
            return _compiled(super().get_capture_scope())

    def _compiled(scope: dict) -> dict:
        return {k: (FrontendFunction.of(v.fn) if type(v) is InterpretedFunction else v) for k, v in scope.items()}

    return FrontendFunction


# Imported ahead (`prepare`), before the audit hook exists: once the candidate is loaded a lazy import
# of a module from its .pyc is refused (marshal), and the front end imports lazily.
_PACKAGES = ("triton.compiler", "triton.language", "triton.backends.nvidia")


class FrontendCheck:
    def __init__(self, describe: Any) -> None:
        # launches.describe (exact-type descriptions of launch values), given by the LaunchCounter that
        # owns this check: importing it here would make launches <-> frontend a cycle.
        self._describe = describe
        self._cls: Any = None
        self._seen: list[tuple[Any, Any]] = []  # (python function, specialization key) that passed
        self._backend: Any = None
        self._target: Any = None
        self._swaps: list[tuple[Any, str, Any, Any]] = []  # (owner, name, interpreter's, compiler's)
        self._pristine: list[tuple[Any, dict]] = []  # (owner, its attributes before any kernel ran)

    def prepare(self, kernel: Any, args: tuple, kwargs: dict) -> None:
        """Before the candidate exists (the child's warm-up): import the front end's modules and lower
        one harness kernel, so that no check later imports anything."""
        import importlib
        import pkgutil

        for name in _PACKAGES:
            package = importlib.import_module(name)
            for info in pkgutil.walk_packages(package.__path__, name + "."):
                try:
                    importlib.import_module(info.name)
                except Exception:  # noqa: BLE001 - a module of another platform (AMD, a missing tool)
                    pass
        # Triton's own jitted functions (tl.max, tl.sum, tl.cdiv, tensor methods such as x.to's
        # helpers) are interpreter wrappers too under TRITON_INTERPRET=1: during a check they are
        # swapped for compiler-side ones (`_swapped`), found here once.
        from triton.runtime.interpreter import InterpretedFunction

        self._ensure()
        owners: list = [m for n, m in list(sys.modules.items()) if n.startswith("triton.language") and m is not None]
        owners += [v for m in owners[:] for v in vars(m).values() if isinstance(v, type)]
        seen: set[int] = set()
        for owner in owners:
            if id(owner) in seen:
                continue
            seen.add(id(owner))
            self._pristine.append((owner, dict(vars(owner))))
            for name, value in list(vars(owner).items()):
                if type(value) is InterpretedFunction:
                    self._swaps.append((owner, name, value, self._cls.of(value.fn)))
        self.check(kernel, args, kwargs)
        self._seen.clear()

    def _ensure(self) -> None:
        if self._cls is None:
            from triton.backends.compiler import GPUTarget
            from triton.compiler.compiler import make_backend

            self._cls = _frontend_function_class()
            self._target = GPUTarget("cuda", _TARGET_ARCH, 32)
            self._backend = make_backend(self._target)

    @contextlib.contextmanager
    def _swapped(self):
        done = []
        try:
            # Triton's interpreter patches triton.language for each call of a jitted function and,
            # for one called from a kernel (tl.sigmoid, tl.cdiv: triton/runtime/interpreter.py's
            # `InterpretedFunction.__call__`, Triton 3.9), never restores the patch: the next kernel's
            # check then lowered with interpreter builtins and failed ("'value' object has no attribute
            # 'dtype'"), an honest two-kernel answer refused at gate 2. The check runs on the
            # attributes as they were before any kernel ran.
            for owner, attrs in self._pristine:
                for name, value in attrs.items():
                    now = vars(owner).get(name, _MISSING)
                    if now is not value:
                        setattr(owner, name, value)
                        done.append((owner, name, now))
            for owner, name, interpreted, compiled in self._swaps:
                if vars(owner).get(name) is interpreted:
                    setattr(owner, name, compiled)
                    done.append((owner, name, interpreted))
            yield
        finally:
            for owner, name, value in reversed(done):
                if value is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, value)

    def check(self, interpreted: Any, args: tuple, kwargs: dict) -> None:
        """Raise (Triton's CompilationError, or whatever the front end raised) if the kernel that
        `interpreted` wraps does not lower to Triton IR for a GPU with these launch arguments."""
        from triton.compiler.compiler import ASTSource
        from triton.runtime.jit import mangle_type

        self._ensure()
        python_fn = object.__getattribute__(interpreted, "fn")  # not through a property of a subclass
        jf = self._cls.of(python_fn)
        names = set(jf.arg_names)
        params = {k: v for k, v in kwargs.items() if k in names}
        options = {k: v for k, v in kwargs.items() if k not in names and k not in ("grid", "warmup")}
        bound = jf.signature.bind(*args, **params)
        bound.apply_defaults()
        signature, constexprs = {}, {}
        for p in jf.params:
            value = bound.arguments[p.name]
            kind = "constexpr" if p.is_constexpr else mangle_type(value)
            signature[p.name] = kind
            if kind == "constexpr":
                constexprs[p.name] = value
        key = (tuple(signature.values()), self._describe(tuple(constexprs.values())),
               self._describe(tuple(sorted(options.items()))))
        for fn, seen in self._seen:
            if fn is python_fn and seen == key:
                return
        from triton._C.libtriton import ir

        opts = self._backend.parse_options(options)
        context = ir.context()
        ir.load_dialects(context)
        self._backend.load_dialects(context)
        with self._swapped():
            ASTSource(jf, signature, constexprs, {}).make_ir(
                self._target, opts, self._backend.get_codegen_implementation(opts), self._backend.get_module_map(),
                context)
        self._seen.append((python_fn, key))
