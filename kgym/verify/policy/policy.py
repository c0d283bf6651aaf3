"""Gate 1, the static policy: an AST allow-list over the candidate's source.

A cheap first filter that tells the model, with line numbers, why its answer was rejected. It is not
the defence: the runtime tripwires of the child process (`kgym.verify.candidate.guard`) and the comparison in
the trusted parent are. What it does:
- imports: only the modules in ALLOWED_IMPORTS (torch, torch.nn, triton, triton.language, math, ...);
- names: no eval/exec/compile/open/__import__/globals/..., no getattr/setattr with a computed name;
  every name read is bound by the candidate or an allowed builtin, and the import runs no candidate
  code (`kgym.verify.policy.free_names`: the Triton interpreter injects `np` and friends into the module);
- evaluators: nothing that turns a string into an object (typing's get_type_hints and ForwardRef,
  str.format's attribute fields, three-argument type(), torch.load's unpickler, getattr/hasattr/type
  as values); `from typing import X` only for the annotation names in TYPING_NAMES;
- attributes: no dunders but `__init__`, no private (`_x`) attribute except on `self`, none of the
  escape hatches in BANNED_ATTRIBUTES (torch.ops, torch.compile, .numpy(), timers, module handles);
- no assignment to attributes of imported modules (monkeypatching timers, Triton, torch);
- `ModelNew` must exist and must not subclass the reference `Model`.
Copies of the reference's helpers (`Model`, `get_inputs`, `get_init_inputs`) are stripped, not
punished: the study's v3 lesson.
"""

from __future__ import annotations

import ast
import codecs
import io
import tokenize
from dataclasses import dataclass

from kgym.verify.policy.free_names import check_names

ALLOWED_IMPORTS = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "triton",
    "triton.language",
    "triton.language.extra",  # and its submodules: libdevice for erf, tanh, ...
    "math",
    "__future__",
)
# `typing` re-exports stdlib modules (typing.operator.attrgetter reaches any name from a string) and
# holds evaluators (get_type_hints evaluates string annotations: it reached torch._C.TensorBase.numpy;
# ForwardRef; NamedTuple and TypedDict build classes through eval/exec). Only `from typing import X`
# for these names, which annotate and evaluate nothing, is allowed; never the module itself.
TYPING_NAMES = frozenset({
    "Any", "Optional", "Union", "Tuple", "List", "Dict", "Set", "FrozenSet", "Sequence", "Mapping",
    "MutableMapping", "MutableSequence", "Iterable", "Iterator", "Callable", "Type", "Literal", "Final",
    "ClassVar", "Annotated", "NoReturn", "Collection", "Container", "Hashable", "Sized", "Generator",
    "SupportsInt", "SupportsFloat", "SupportsIndex", "TYPE_CHECKING", "cast", "overload", "final",
})

BANNED_NAMES = {
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "breakpoint",
    "input", "exit", "quit", "help", "memoryview", "__builtins__", "__loader__", "__spec__",
    "delattr", "setattr", "bytearray", "id", "aiter", "anext",
}
# Builtins that look names up or build classes from strings: allowed only as direct calls, getattr and
# hasattr with a constant name (checked like an attribute), type with one argument.
CALL_ONLY_NAMES = {"getattr", "hasattr", "type"}

# Attribute names that reach private machinery, other processes, raw memory, timers or the guard.
BANNED_ATTRIBUTES = {
    # torch internals and code generators
    "ops", "compile", "fx", "export", "library", "cpp_extension", "load_inline", "hub",
    "package", "multiprocessing", "distributed", "profiler", "autograd", "backends", "utils",
    "overrides", "memory", "set_per_process_memory_fraction", "empty_cache", "dispatch",
    # triton internals
    "runtime", "compiler", "testing", "knobs", "driver", "interpreter",
    # module handles reachable as attributes (torch.serialization.os, ...)
    "sys", "os", "subprocess", "ctypes", "gc", "inspect", "importlib", "builtins", "socket",
    "threading", "modules", "signal", "shutil", "pathlib", "io",
    # leaving the dispatcher: raw memory and other array libraries
    "numpy", "tolist", "item", "from_numpy", "frombuffer", "from_file", "from_dlpack", "to_dlpack",
    "untyped_storage", "storage", "set_", "share_memory_",
    # timers and synchronisation: forging the timing gate
    "perf_counter", "perf_counter_ns", "time", "monotonic", "Event", "elapsed_time", "synchronize",
    "Stream", "current_stream", "stream", "set_stream", "default_stream",
    # frames and code objects
    "f_back", "f_globals", "f_locals", "gi_frame", "cr_frame", "tb_frame", "co_code",
    # stdlib modules re-exported as attributes, and the tools that turn strings into attributes
    "typing", "operator", "functools", "attrgetter", "methodcaller", "itemgetter", "partial", "types",
    "weakref", "copyreg", "pickle", "marshal", "contextlib", "warnings", "linecache", "traceback",
    "tokenize", "dis", "codeop", "pdb", "runpy", "pkgutil", "site", "sysconfig", "platform",
    "tempfile", "glob", "shlex", "pty", "select", "selectors", "asyncio", "concurrent", "queue",
    "atexit", "faulthandler", "tracemalloc", "_pytree", "pytree", "tree_map", "dataclasses", "abc",
    "collections", "copy", "enum", "json", "re", "struct", "mmap", "resource", "kgym",
    # Python-level compute on tensor memory, out of the dispatcher's sight
    "apply_", "map_", "map2_", "as_tensor", "asarray", "__array__", "__dlpack__",
    # raw addresses: what numpy's __array_interface__ or ctypes need to read tensor memory
    "data_ptr", "const_data_ptr", "mutable_data_ptr", "_cdata",
    # string evaluators: format fields read attributes ('{0.__class__}'), custom classes by name
    "format", "format_map", "vformat", "Formatter", "classes", "get_type_hints", "get_annotations",
    "ForwardRef", "evaluate_forward_ref", "NamedTuple", "TypedDict", "namedtuple", "make_dataclass",
    # codecs are looked up, and their modules imported, by name
    "encode", "decode",
    # Python that Triton runs on kernel values (in the CPU interpreter: on data): the numpy handle of an
    # interpreted block, compile-time functions and builtin/extern markers for the candidate's own code
    "handle", "constexpr_function", "builtin", "extern",
    # the kernel object's machinery: what the interpreter runs in its place and when
    # (test_interpreter_rewrite.py; the runtime pins the rewrite at every launch too)
    "rewritten_fn", "rewriter", "rewrite", "rewrite_ast", "pre_run_hooks", "add_pre_run_hook",
}
# Inside @triton.jit bodies: the builtins the code generator evaluates at compile time that inspect
# objects (the CPU interpreter answers them differently: its blocks hold numpy arrays).
KERNEL_BANNED_CALLS = frozenset({"hasattr", "getattr", "isinstance", "type"})
# Attributes a kernel may read as values from its tensors, dtypes, types and constexprs (the same for
# the compiler and the interpreter); any other attribute of a value may only be called (x.to(...)).
KERNEL_SAFE_ATTRIBUTES = frozenset({
    "dtype", "shape", "type", "T", "numel", "ndim", "value", "element_ty", "scalar", "primitive_bitwidth",
    "fp_mantissa_width", "int_bitwidth", "name", "block_shape", "strides", "base",
})

# Banned names (a stdlib module's) that are also tensor methods: allowed where the attribute is called at
# once (`x.select(dim, i)`, a view), since a module cannot be called and a chain through it (`m.select.poll`)
# is no call of `select`. Chains from imported modules are still resolved (`_resolve_chain`). The honest
# sweep's third round, 2026-12-07: the reference's own `x.select(self.dim, 0)` was refused by name.
CALLED_ONLY_ATTRIBUTES = frozenset({"select"})

ALLOWED_DUNDERS = {"__init__"}
# Builtin classes a candidate's class may subclass (besides its own and torch's or Triton's).
ALLOWED_BASES = frozenset({"object", "Exception", "ValueError", "RuntimeError", "TypeError", "NotImplementedError"})

REFERENCE_HELPERS = ("Model", "get_inputs", "get_init_inputs")


@dataclass(frozen=True)
class PolicyViolation:
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class PolicyResult:
    ok: bool
    violations: tuple[PolicyViolation, ...]
    source: str  # the source to run: reference helpers stripped
    stripped: tuple[str, ...]

    @property
    def reason(self) -> str:
        return "; ".join(str(v) for v in self.violations)


def import_allowed(module: str) -> bool:
    return any(module == a or (a == "triton.language.extra" and module.startswith(a + "."))
               for a in ALLOWED_IMPORTS)


# Modules a chain of attributes may pass through. Anything else reached from an allowed module
# (torch.nn.functional.np is numpy, torch.cuda.tunable.mp is multiprocessing) is refused, whatever
# name it goes by.
ALLOWED_MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.cuda", "triton",
                   "triton.language", "math")


def _module_allowed(name: str) -> bool:
    return name in ALLOWED_MODULES or name.startswith("triton.language.")


# Classes a candidate may name whole (as a base, mostly) although their module is off limits: the
# chain must end at the class (`torch.autograd.Function.x`, `torch.autograd.grad` stay refused). A
# custom autograd Function's forward runs under the same guard, profiler and launch hooks as any
# other code of the candidate's; the class is the common way models wrap a Triton kernel (the honest
# sweep's third round, 2026-12-07: `class F(torch.autograd.Function)` was refused by the policy).
NAMED_CLASSES = frozenset({"torch.autograd.Function"})
_NAMED_CLASS_MODULES = frozenset(p.split(".")[-2] for p in NAMED_CLASSES)

# Callables of the allowed modules that evaluate strings or reach objects by name (the unpickler).
_BANNED_CALLABLES = ("torch.load", "torch.save")


def _foreign(obj: object) -> str | None:
    """A function or class that allowed modules merely re-export from elsewhere (torch.cuda's
    lru_cache is functools', torch.nn.functional's Callable is typing's): its stdlib name, or None.
    torch, triton and math are the libraries the allow-list means; builtins only as ALLOWED_BUILTINS."""
    import types

    from kgym.verify.policy.free_names import ALLOWED_BUILTINS

    if not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        return None
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", getattr(obj, "__name__", "?"))
    if not isinstance(module, str):
        return None
    if module == "builtins":
        return None if name in ALLOWED_BUILTINS or name in ("NoneType", "ellipsis") else f"builtins.{name}"
    if module.partition(".")[0] in _LIBRARIES:
        full = f"{module}.{name}"
        return full if any(obj is _named(b) for b in _BANNED_CALLABLES) else None
    return f"{module}.{name}"


def _named(path: str) -> object:
    module, _, attr = path.rpartition(".")
    return getattr(_checked_import(module), attr, None)


def _checked_import(module: str) -> object:
    """The module, to follow a chain on: imported only when the allow-list names it. The policy runs
    in the trusted parent, so importing a module a candidate names would run that module's top level
    there (`import venv.__main__ as vm; vm.x` ran venv's main and exited the parent, 2026-12-04)."""
    import importlib

    if not (import_allowed(module) or _module_allowed(module)):
        raise ImportError(f"{module} is not on the allow-list: not imported to check a chain")
    return importlib.import_module(module)


def _reaches(bad: str) -> str:
    """How a violation names what a chain reached: a module, a callable from elsewhere, or an object
    of a class from elsewhere."""
    if bad.startswith("@"):
        return f"an object of class {bad[1:]!r} (from outside torch, triton and math)"
    return f"{bad[1:]!r} (a callable from outside torch, triton and math, or one that unpickles)" \
        if bad.startswith("=") else f"the module {bad!r}"


_LIBRARIES = ("torch", "triton", "math")
_MISSING = object()


def _lookup(root_module: str, attrs: list[str]) -> object:
    """`root.a.b...` on the real (allow-listed) modules, or _MISSING when the root is refused or
    unimportable or an attribute is missing (which fails at run time, not here)."""
    try:
        obj = _checked_import(root_module)
        for attr in attrs:
            obj = getattr(obj, attr)
    except Exception:  # noqa: BLE001
        return _MISSING
    return obj


def _library_class(cls: type) -> bool:
    module = getattr(cls, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] in _LIBRARIES


def _resolve_chain(root_module: str, attrs: list[str]) -> str | None:
    """Follow `root.a.b...` on the real modules (in the trusted parent); the first module reached
    that is not allowed (or callable re-exported from elsewhere, or banned), or None."""
    import types

    if root_module == "__future__":
        return None  # compiler directives, not objects the candidate uses
    try:
        obj = _checked_import(root_module)
    except Exception:  # noqa: BLE001 - an unimportable or refused root is reported by the import rule
        return None
    for attr in attrs:
        try:
            obj = getattr(obj, attr)
        except Exception:  # noqa: BLE001 - a missing attribute fails at run time, not here
            return None
        if isinstance(obj, types.ModuleType):
            if not _module_allowed(obj.__name__):
                return obj.__name__
            continue
        foreign = _foreign(obj)
        if foreign is not None:
            return "=" + foreign  # a callable, not a module (see _reaches)
        if isinstance(obj, type):
            continue
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            return None  # a function: what it holds is reached only through dunders, refused by name
        cls = type(obj)
        if cls.__module__ == "builtins":
            return None  # a number, string or container: its attributes are its methods
        if not _library_class(cls):
            # An object of another library's class left in an allowed module (triton.language.extra's
            # `spec`, a ModuleSpec, whose `loader` is importlib's: our red team subclassed it to run
            # code under another file's name, 2026-12-04). Chains used to stop at the first value.
            return f"@{cls.__module__}.{cls.__qualname__}"
        # an object of torch's, Triton's or math's: follow the chain on
    return None


def _module_name(module: str, name: str) -> str | None:
    """The real name of `module.name` when it is a module (torch.torch is torch), else None."""
    import types

    obj = _lookup(module, [name])
    return obj.__name__ if isinstance(obj, types.ModuleType) else None


def _resolves_to_module(root_module: str, attrs: list[str]) -> bool:
    import types

    return isinstance(_lookup(root_module, attrs), types.ModuleType)


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.violations: list[PolicyViolation] = []
        self.module_names: set[str] = set()  # names bound to imported modules
        self.module_paths: dict[str, str] = {}  # name -> full module path
        self.kernel_depth = 0  # > 0 inside the body of a @triton.jit function
        self.literal_names: set[str] = set()  # top-level names bound to literal values (tl.constexpr args)
        self.self_is_instance: list[bool] = []  # per enclosing function that binds `self`: is it a method's?
        self.own_classes: set[str] = set()  # classes the candidate defined so far (bases may name them)
        self.from_imported: dict[str, tuple[str, str]] = {}  # name -> (module, attribute) of `from m import a`

    def flag(self, node: ast.AST, rule: str, message: str) -> None:
        self.violations.append(PolicyViolation(getattr(node, "lineno", 0), rule, message))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not import_allowed(alias.name):
                self.flag(node, "import", f"import of {alias.name!r} is not allowed "
                          f"(allowed: {', '.join(ALLOWED_IMPORTS[:-1])})")
            bound = alias.asname or alias.name.split(".")[0]
            self.module_names.add(bound)
            self.module_paths[bound] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.flag(node, "import", "relative imports are not allowed")
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if module == "typing":
                if alias.name not in TYPING_NAMES:
                    self.flag(node, "import", f"'from typing import {alias.name}' is not allowed (typing "
                              f"names for annotations only: {', '.join(sorted(TYPING_NAMES))})")
                continue
            if alias.name == "*":
                self.flag(node, "import", f"'from {module} import *' is not allowed")
            elif not (import_allowed(module) and (import_allowed(full) or not _is_module_like(alias.name))):
                self.flag(node, "import", f"import of {full!r} is not allowed "
                          f"(allowed: {', '.join(ALLOWED_IMPORTS[:-1])})")
            if alias.name.startswith("_") and module != "__future__":
                self.flag(node, "private", f"import of private name {full!r}")
            elif alias.name in BANNED_ATTRIBUTES or alias.name in BANNED_NAMES:
                self.flag(node, "attribute", f"import of {full!r} is not allowed")
            bound = alias.asname or alias.name
            if import_allowed(module):
                self.from_imported[bound] = (module, alias.name)
            if import_allowed(full):
                self.module_names.add(bound)
                self.module_paths[bound] = full
            elif import_allowed(module):
                bad = _resolve_chain(module, [alias.name])
                if bad:
                    self.flag(node, "module", f"'from {module} import {alias.name}' reaches {_reaches(bad)}, "
                              "which is not allowed")
                real = _module_name(module, alias.name)
                if real is not None:  # `from torch import cuda`: follow chains from it like from an import
                    self.module_names.add(bound)
                    self.module_paths[bound] = real

    def _module_as_value(self, node: ast.AST, chain: list[str] | None) -> None:
        """A module may only be used as `module.attr`: bound to a name, put in a container or passed
        to a function, it escapes the chain check above (F = torch.nn.functional; F.np)."""
        if not chain or chain[0] not in self.module_paths or isinstance(getattr(node, "_parent", None), ast.Attribute):
            return
        if isinstance(getattr(node, "ctx", None), ast.Load) \
                and _resolves_to_module(self.module_paths[chain[0]], chain[1:]):
            bad = _resolve_chain(self.module_paths[chain[0]], chain[1:])
            if bad:  # say the worse thing: the module itself is off limits
                self.flag(node, "module", f"{'.'.join(chain)} reaches {_reaches(bad)}, which is not allowed")
            else:
                self.flag(node, "module", f"{'.'.join(chain)} is a module used as a value; use it only as "
                          f"{'.'.join(chain)}.name")

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg and node.arg.startswith("__") and node.arg.endswith("__"):
            self.flag(node.value, "dunder", f"the keyword {node.arg!r} names a dunder")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, str) and len(v) > 4 and v.startswith("__") and v.endswith("__"):
            self.flag(node, "dunder", f"the string {v!r} names a dunder (attributes are reached by name only)")

    def visit_Name(self, node: ast.Name) -> None:
        self._module_as_value(node, [node.id])
        parent = getattr(node, "_parent", None)
        if node.id in CALL_ONLY_NAMES and not (isinstance(parent, ast.Call) and parent.func is node):
            self.flag(node, "name", f"{node.id!r} may only be called directly (as a value it looks names "
                      "up from computed strings)")
        if node.id in BANNED_NAMES:
            self.flag(node, "name", f"use of {node.id!r} is not allowed")
        elif node.id.startswith("__") and node.id.endswith("__") and node.id not in ("__name__",):
            self.flag(node, "dunder", f"use of {node.id!r} is not allowed")
        self.generic_visit(node)

    def _named_class(self, node: ast.AST) -> bool:
        """`node` is, or is the module part of, a whole chain naming a class of NAMED_CLASSES
        (`torch.autograd.Function`, read only: not followed on, assigned or deleted)."""
        if not isinstance(node, ast.Attribute):
            return False
        parent = getattr(node, "_parent", None)
        if isinstance(parent, ast.Attribute) and parent.value is node and node.attr in _NAMED_CLASS_MODULES:
            node, parent = parent, getattr(parent, "_parent", None)  # the module part: judge the whole chain
        if isinstance(parent, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            return False
        chain = _attr_chain(node)
        if not chain or chain[0] not in self.module_paths:
            return False
        path = ".".join([self.module_paths[chain[0]], *chain[1:]])
        if path not in NAMED_CLASSES:
            return False
        root, *attrs = path.split(".")
        named = _lookup(root, attrs)
        return isinstance(named, type) and _lookup(self.module_paths[chain[0]], chain[1:]) is named

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._named_class(node):
            return  # a class named whole, through a module the chain rules otherwise refuse
        self._check_attr_name(node, node.attr, node.value)
        chain = _attr_chain(node)
        self._module_as_value(node, chain)
        if self.kernel_depth:
            self._kernel_value(node, chain)
        if chain and chain[0] in self.module_paths and isinstance(node.ctx, ast.Load):
            bad = _resolve_chain(self.module_paths[chain[0]], chain[1:])
            already = any(v.rule == "module" and v.line == node.lineno for v in self.violations)
            if bad and not already:
                self.flag(node, "module", f"{'.'.join(chain)} reaches {_reaches(bad)}, which is not allowed")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _root_name(node) in self.module_names:
            self.flag(node, "monkeypatch", f"assigning to {ast.unparse(node)!r} (an attribute of an "
                      "imported module) is not allowed")
        self.generic_visit(node)

    def _check_attr_name(self, node: ast.AST, attr: str, base: ast.AST) -> None:
        if attr.startswith("__") and attr.endswith("__"):
            if attr not in ALLOWED_DUNDERS:
                self.flag(node, "dunder", f"dunder attribute {attr!r} is not allowed")
        elif attr.startswith("_"):
            # `self._x` only where self is a method's own instance: a plain function's parameter named
            # self took any object (Triton's rewriter: self._compile_and_exec ran a string, 2026-12-04).
            if not (isinstance(base, ast.Name) and base.id == "self" and self.self_is_instance
                    and self.self_is_instance[-1]):
                self.flag(node, "private", f"private attribute {attr!r} is not allowed "
                          "(torch._C, torch._dynamo and friends are off limits)")
        elif attr in BANNED_ATTRIBUTES and not (attr in CALLED_ONLY_ATTRIBUTES and isinstance(node, ast.Attribute)
                                                and _is_called(node)):
            self.flag(node, "attribute", f"attribute {attr!r} is not allowed")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """A class may subclass only the candidate's own classes, `object` and the builtin
        exceptions, and classes of torch and Triton named directly (nn.Module, torch.autograd.Function):
        a base computed from a value (`type(x)`, a name assigned from anything) subclassed importlib's
        loader to run code under another file's name (our red team, 2026-12-04)."""
        for base in node.bases:
            why = self._base_problem(base)
            if why:
                self.flag(base, "class", f"class {node.name!r} subclasses {ast.unparse(base)[:80]}: {why}")
        self.own_classes.add(node.name)
        self.generic_visit(node)

    def _base_problem(self, base: ast.AST) -> str | None:
        if isinstance(base, ast.Name):
            if base.id in self.own_classes or base.id in ALLOWED_BASES:
                return None
            if base.id in self.from_imported:
                module, name = self.from_imported[base.id]
                return self._library_base(module, [name])
            return "a base must be a class the candidate defined, or a torch or Triton class named directly"
        chain = _attr_chain(base) if isinstance(base, ast.Attribute) else None
        if chain and chain[0] in self.module_paths:
            return self._library_base(self.module_paths[chain[0]], chain[1:])
        return "a base must be a class the candidate defined, or a torch or Triton class named directly"

    @staticmethod
    def _library_base(module: str, attrs: list[str]) -> str | None:
        obj = _lookup(module, attrs)
        return None if isinstance(obj, type) and _library_class(obj) else "it names no class of torch or Triton"

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        """`case C(name=v)` reads attribute `name` of the subject, and `case C(v)` the attribute that
        C.__match_args__ names: attribute reads with no `x.name` in the source, which the attribute
        and chain rules never see (`case object(__globals__=g)` reached sys.modules). Only the bare
        type test `case C():` is allowed."""
        if node.kwd_attrs:
            self.flag(node, "match", f"the class pattern reads attribute(s) {', '.join(map(repr, node.kwd_attrs))} "
                      "by keyword; use isinstance() and x.name")
        if node.patterns:
            self.flag(node, "match", "a positional class pattern reads attributes through __match_args__; "
                      "use isinstance() and x.name")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.kernel_depth and isinstance(func, ast.Name) and func.id in KERNEL_BANNED_CALLS:
            self.flag(node, "kernel", f"{func.id}() is not allowed in a @triton.jit function (the compiler "
                      "evaluates it at compile time, the CPU interpreter on its numpy blocks: they answer differently)")
        chain = _attr_chain(func) if isinstance(func, ast.Attribute) else None
        if chain and chain[-1] == "constexpr" and chain[0] in self.module_paths and not self.kernel_depth:
            if node.keywords or not all(self._literal(a) for a in node.args):
                self.flag(node, "kernel", f"{'.'.join(chain)}() takes a literal constant (a Triton global is a "
                          "number, a string or a dtype, not an object the compiler would call into)")
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
            if any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
                self.flag(node, "getattr", f"{func.id}() with unpacked arguments is not allowed")
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.flag(node, "getattr", f"{func.id}() with a computed attribute name is not allowed")
            else:
                base = node.args[0]
                self._check_attr_name(node, name.value, base)
        self.generic_visit(node)
        if isinstance(func, ast.Name) and func.id == "type" and (len(node.args) != 1 or node.keywords):
            self.flag(node, "name", "type() with more than one argument builds a class from computed names")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name.startswith("__") and node.name.endswith("__") and node.name not in ALLOWED_DUNDERS \
                and not (node.name == "__call__" and _plain_class(getattr(node, "_parent", None))):
            self.flag(node, "dunder", f"defining {node.name!r} is not allowed (protocol hooks such as "
                      "__array_interface__ or __del__ run outside forward())")
        if not _is_jit(node):
            # `self` is a method's own instance only in a method whose first parameter it is
            first = (node.args.posonlyargs + node.args.args)[:1]
            is_method = (isinstance(getattr(node, "_parent", None), ast.ClassDef) and bool(first)
                         and first[0].arg == "self"
                         and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list))
            self._visit_binding_self(node, is_method)
            return
        # A kernel: its defaults are literal (a default is a constexpr the launch never names), its
        # body is Triton (see _kernel_call, _kernel_value).
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            if not self._literal(d):
                self.flag(d, "kernel", "a @triton.jit parameter's default must be a literal constant")
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self.kernel_depth += 1
        try:
            for stmt in node.body:
                self.visit(stmt)
        finally:
            self.kernel_depth -= 1

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_binding_self(node, False)

    def _visit_binding_self(self, node: ast.FunctionDef | ast.Lambda, is_method: bool) -> None:
        """Visit a function's children; where its parameters bind `self`, `self` in them is a method's
        own instance or not (`self_is_instance`), and a closure inherits the answer."""
        binds_self = "self" in _param_names(node.args)
        if binds_self:
            self.self_is_instance.append(is_method)
        try:
            self.generic_visit(node)
        finally:
            if binds_self:
                self.self_is_instance.pop()

    def _literal(self, node: ast.AST) -> bool:
        """A literal constant expression: numbers, strings, booleans, None, arithmetic on them, names
        bound at top level to such, math's constants and functions of them, Triton dtypes."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.literal_names
        if isinstance(node, ast.UnaryOp):
            return self._literal(node.operand)
        if isinstance(node, ast.BinOp):
            return self._literal(node.left) and self._literal(node.right)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self._literal(e) for e in node.elts)
        chain = _attr_chain(node.func if isinstance(node, ast.Call) else node) \
            if isinstance(node, (ast.Attribute, ast.Call)) else None
        if not chain or chain[0] not in self.module_paths:
            return False
        path = self.module_paths[chain[0]]
        if isinstance(node, ast.Call):  # math.log2(2.0), tl.constexpr(3)
            return (path == "math" or _resolves_to(path, chain[1:], "constexpr")) and not node.keywords \
                and all(self._literal(a) for a in node.args)
        return path == "math" or _resolves_to(path, chain[1:], "dtype")

    def _kernel_value(self, node: ast.Attribute, chain: list[str] | None) -> None:
        """In a kernel: a function of an imported module may be called, or handed to a call of the
        module's own functions (tl.reduce(x, 0, tl.maximum)); never compared, stored or handed to the
        candidate's code. The CPU interpreter replaces Triton's functions by its own while a kernel
        runs, so `tl.exp is tl.math.exp` is true for the compiler and false for the interpreter: a
        branch the GPU compiler prunes would run on the CPU."""
        if not isinstance(node.ctx, ast.Load):
            return
        parent = getattr(node, "_parent", None)
        if not chain or chain[0] not in self.module_paths:
            # Not a module's: a value's attribute (x.dtype) or a method to call (x.to(...)). A method
            # as a value (T.exp with T = tl.tensor, x.exp) is the interpreter's own while a kernel runs.
            if node.attr not in KERNEL_SAFE_ATTRIBUTES and not (isinstance(parent, ast.Call) and parent.func is node):
                self.flag(node, "kernel", f"in a @triton.jit function, .{node.attr} may only be called (attributes "
                          f"read as values: {', '.join(sorted(KERNEL_SAFE_ATTRIBUTES))})")
            return
        if isinstance(parent, ast.Attribute):
            return  # judged as the longer chain
        if not _resolves_to(self.module_paths[chain[0]], chain[1:], "callable"):
            return
        if isinstance(parent, ast.Call) and parent.func is node:
            return
        if isinstance(parent, ast.keyword):
            parent = getattr(parent, "_parent", None)
        if isinstance(parent, ast.Call) and parent.func is not node:
            callee = _attr_chain(parent.func) if isinstance(parent.func, ast.Attribute) else None
            if callee and callee[0] in self.module_paths:
                return
        if isinstance(parent, (ast.AnnAssign, ast.arg)):
            return  # an annotation
        self.flag(node, "kernel", f"in a @triton.jit function, {'.'.join(chain)} may only be called (or handed to "
                  "a call of Triton's own functions): as a value the CPU interpreter's version differs from the "
                  "compiler's")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Compare(self, node: ast.Compare) -> None:
        if self.kernel_depth:
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, (ast.Is, ast.IsNot)) and not any(
                        isinstance(x, ast.Constant) and x.value is None for x in operands[i:i + 2]):
                    self.flag(node, "kernel", "in a @triton.jit function, 'is' compares only with None (the compiler "
                              "decides identity at compile time on its IR objects, the interpreter on its own)")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.flag(node, "global", "'global' statements are not allowed (state must live on the module)")

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.flag(node, "global", "'nonlocal' statements are not allowed")


def _param_names(args: ast.arguments) -> set[str]:
    return {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a is not None}


def _is_jit(node: ast.FunctionDef) -> bool:
    """Is the function decorated with triton.jit (`@triton.jit`, `@jit`, `@triton.jit(...)`)?"""
    for d in node.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if (isinstance(d, ast.Name) and d.id == "jit") or (isinstance(d, ast.Attribute) and d.attr == "jit"):
            return True
    return False


def _resolves_to(root_module: str, attrs: list[str], kind: str) -> bool:
    """Does `root.a.b` (on the real modules) resolve to a Triton dtype (`kind` 'dtype'), the constexpr
    class ('constexpr'), or a callable that is neither a dtype nor a module ('callable')?"""
    import types

    obj = _lookup(root_module, attrs)
    if obj is _MISSING:
        return False
    from triton.language import core as tl_core

    if kind == "dtype":
        return isinstance(obj, tl_core.dtype)
    if kind == "constexpr":
        return obj is tl_core.constexpr
    return callable(obj) and not isinstance(obj, (tl_core.dtype, types.ModuleType))


def _is_module_like(name: str) -> bool:
    """`from torch import nn` imports a module; `from torch import empty` a function."""
    return name in {"nn", "functional", "language", "extra", "libdevice", "runtime", "compiler",
                    "testing", "utils", "ops", "jit", "fx", "library", "backends", "autograd"}


def _is_called(node: ast.Attribute) -> bool:
    """`node` is the callee of a call (`x.select(...)`), not a value read or passed on."""
    parent = getattr(node, "_parent", None)
    return isinstance(parent, ast.Call) and parent.func is node


def _plain_class(node: ast.AST | None) -> bool:
    """A class statement with no base but `object` and no keywords: `__call__` may be defined there. It
    runs only where the candidate's own code calls the object (a launcher, a helper), as a function
    would; on a subclass of nn.Module or of any library class it would replace the library's own
    protocol (nn.Module.__call__, which the harness calls), so there it stays refused (the honest sweep's
    third round, 2026-12-07: a launcher class with `__call__` was refused by the policy)."""
    return isinstance(node, ast.ClassDef) and not node.keywords and all(
        isinstance(b, ast.Name) and b.id == "object" for b in node.bases)


def _attr_chain(node: ast.Attribute) -> list[str] | None:
    """`a.b.c` -> ['a', 'b', 'c'] when the chain is made of plain names only."""
    parts = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    parts.append(cur.id)
    return parts[::-1]


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _python_lines(source: str) -> list[str]:
    """`source`'s lines as Python's tokenizer counts them (the AST's line numbers): broken at `\\r\\n`,
    `\\r` and `\\n` only. Not `str.splitlines`, which also breaks at form feed, vertical tab, `\\x1c`-`\\x1e`,
    `\\x85`, `\\u2028` and `\\u2029`: indexed by the AST's numbers, it blanked the wrong lines (red team,
    2026-12-07: a helper's tail survived into the module the child ran, after the policy had checked the
    tree without it)."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _strip_helpers(source: str, tree: ast.Module) -> tuple[str, tuple[str, ...]]:
    """Blank out top-level copies of the reference helpers, keeping every other line number; the text
    to check (parsed again: `check_source`) and to run, and the names blanked."""
    lines = _python_lines(source)
    stripped = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name in REFERENCE_HELPERS:
            stripped.append(stmt.name)
            first = min([stmt.lineno] + [d.lineno for d in stmt.decorator_list])
            for i in range(first - 1, stmt.end_lineno or stmt.lineno):
                lines[i] = ""
    return "\n".join(lines).rstrip("\n") + "\n", tuple(stripped)


def _import_encoding(source: str) -> str:
    """The encoding an import decodes `source` with once the child has written it as UTF-8: Python's own
    reading of a PEP 263 coding comment (`tokenize.detect_encoding`, what the import machinery uses);
    an unknown one is refused as such. The policy parses text; the child imports a file, and any
    encoding but UTF-8 makes the module that runs another program than the text that was checked (red
    team, 2026-12-07: `coding: utf-7` hid a kernel in a comment of the checked text)."""
    try:
        name = tokenize.detect_encoding(io.BytesIO(source.encode("utf-8")).readline)[0]
        return codecs.lookup(name).name  # "utf8", "UTF_8" -> "utf-8"
    except UnicodeEncodeError as e:  # a lone surrogate: no UTF-8 file holds this text
        return f"none: the text is not UTF-8 ({e.reason} at character {e.start})"
    except (SyntaxError, LookupError) as e:
        return f"unknown ({e})"


MAX_SOURCE_CHARS = 1_000_000  # an answer is a module of kernels: ~10-50 KB


def check_source(source: str) -> PolicyResult:
    """Run the static policy over a candidate; returns the (stripped) source to load if it passes."""
    if len(source) > MAX_SOURCE_CHARS:
        v = PolicyViolation(0, "size", f"the source is {len(source):,} characters; the limit is {MAX_SOURCE_CHARS:,}")
        return PolicyResult(False, (v,), source, ())
    encoding = _import_encoding(source)
    if encoding not in ("utf-8", "utf-8-sig"):
        v = PolicyViolation(1, "encoding", f"the source declares the encoding {encoding!r}: kgym reads an answer "
                            "as UTF-8 text; remove the coding comment (or declare utf-8)")
        return PolicyResult(False, (v,), source, ())
    try:
        # The text that runs is the text whose tree is checked: the helpers are blanked in the text,
        # which is then parsed again (not the first tree with their nodes dropped).
        run, stripped = _strip_helpers(source, ast.parse(source))
        return _check_tree(run, ast.parse(run), stripped)
    except SyntaxError as e:
        v = PolicyViolation(e.lineno or 0, "syntax", f"syntax error: {e.msg}")
        return PolicyResult(False, (v,), source, ())
    except (RecursionError, MemoryError):  # `- - - ... 1` nested 10^5 deep: the parser or the walk gives up
        v = PolicyViolation(0, "syntax", "the source nests expressions too deeply to be checked")
        return PolicyResult(False, (v,), source, ())


def _check_tree(source: str, tree: ast.Module, stripped: tuple[str, ...]) -> PolicyResult:
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child._parent = parent  # noqa: SLF001 - the checker asks what a node is used in
    checker = _Checker()
    for stmt in tree.body:  # top-level names bound to literal constants (in order: later ones may use earlier)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            checker.visit(stmt)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and checker._literal(stmt.value):
            checker.literal_names.add(stmt.targets[0].id)
    checker.violations.clear()
    checker.visit(tree)
    for p in check_names(tree, source):
        checker.violations.append(PolicyViolation(p.line, p.rule, p.message))
    model_new = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "ModelNew"]
    if not model_new:
        checker.flag(tree, "structure", "no top-level 'class ModelNew' found")
    for cls in model_new:
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id == "Model":
                checker.flag(cls, "subclass", "ModelNew subclasses the reference Model: "
                             "write the computation in Triton instead")
    violations = tuple(sorted(checker.violations, key=lambda v: v.line))
    return PolicyResult(not violations, violations, source, stripped)
