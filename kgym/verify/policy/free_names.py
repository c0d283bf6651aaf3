"""Part of gate 1: every name the candidate looks up is one it bound itself, or an allowed builtin,
and the module's top-level code runs none of the candidate's own code.

Why: a global name the candidate never binds is resolved at run time from whatever the module's
globals hold then. On the CPU the Triton interpreter copies its own globals into the candidate's
module at the first launch (`np`, `inspect`, `dataclasses`, `partial`, `time`, ...), so a free `np`
in forward() is numpy, although no line of the candidate names an import of it. The rules:
- a name read in a function, lambda or comprehension body must be bound by an UNCONDITIONAL
  top-level statement (import, def, class, assignment; not inside if/try/for/while/with), or be in
  ALLOWED_BUILTINS: a name bound only in `if False:` stays free at run time;
- a name read by top-level code or a class body must already be bound at that point, in order;
- module-level names are never deleted (`del np` would unbind it again);
- top-level code (the import) never calls the candidate's own functions, classes or kernels, nor
  hands them or lambdas to a call, except inside decorators (`triton.heuristics({...: lambda})`):
  so no kernel is launched, and nothing is injected, before every binding above is made, and no
  candidate code runs at import time, outside the verifier's guard.
Does not check what a bound name holds (policy.py's chain rules do that).
"""

from __future__ import annotations

import ast
import symtable
from dataclasses import dataclass

# Builtins a kernel's host code needs. Left out: the evaluators and the escape hatches (eval, exec,
# compile, __import__, open, globals, locals, vars, input, breakpoint, help), the raw-memory ones
# (memoryview, bytearray, id) and those with no use in a kernel (aiter, anext, exit, quit, ...).
# getattr/hasattr/type are allowed only as direct calls, checked by policy.py.
ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "classmethod", "complex",
    "dict", "dir", "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr",
    "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next",
    "object", "oct", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip",
    "NotImplemented", "Ellipsis", "__name__",
}) | frozenset(  # the exception and warning classes: raising or catching them evaluates nothing
    name for name, value in vars(__import__("builtins")).items()
    if isinstance(value, type) and issubclass(value, BaseException))


@dataclass(frozen=True)
class NameProblem:
    line: int
    rule: str
    message: str


def _targets(node: ast.AST) -> list[str]:
    """Names bound by an assignment target (a, (a, b), [a, *b]); attributes and subscripts bind none."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in _targets(elt)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _captures(pattern: ast.pattern) -> set[str]:
    """Names a match pattern binds when it matches (`case (a, *rest)`, `case {"k": v, **more}`, `as n`)."""
    names = set()
    for node in ast.walk(pattern):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _binds(stmt: ast.stmt) -> list[str]:
    """Names a statement binds unconditionally in the scope it runs in."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _targets(t)]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return _targets(stmt.target)
    return []


def _executed_now(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates when it runs: for a def, its decorators, defaults and
    annotations, not its body; for a class, its decorators, bases and keywords (the body is walked as
    statements of its own)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = stmt.args
        annotations = [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                       if x is not None and x.annotation is not None]
        return [*stmt.decorator_list, *a.defaults, *[d for d in a.kw_defaults if d is not None],
                *annotations, *([stmt.returns] if stmt.returns is not None else [])]
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *stmt.keywords]
    # compound statements: their header only (their bodies are walked as statements)
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]  # each case's guard is checked with the names its pattern captures
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return [t for h in stmt.handlers if (t := h.type) is not None]
    return [stmt]


def _walk_now(node: ast.AST):
    """ast.walk that does not enter function or lambda bodies (they run later, when called)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        for child in ast.iter_child_nodes(cur):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.extend(_executed_now(child))
            elif isinstance(child, ast.Lambda):
                stack.extend(child.args.defaults + [d for d in child.args.kw_defaults if d is not None])
            elif isinstance(child, ast.ClassDef):
                stack.extend(_executed_now(child))
            else:
                stack.append(child)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


class _TopLevel:
    """The ordered walk over top-level statements and class bodies (the code the import runs)."""

    def __init__(self, callables: set[str]) -> None:
        self.problems: list[NameProblem] = []
        self.callables = callables  # names the candidate binds to its own functions, classes, lambdas
        self.own: set[str] = set()  # every name the candidate binds at top level (not imports)
        self.imported: set[str] = set()  # names bound by top-level imports: the libraries it may call
        # top-level functions whose body calls only libraries and builtins (config builders): name -> the
        # global names the body reads (see _inert_reads)
        self.inert: dict[str, set[str]] = {}

    def flag(self, node: ast.AST, rule: str, message: str) -> None:
        self.problems.append(NameProblem(getattr(node, "lineno", 0), rule, message))

    def block(self, body: list[ast.stmt], bound: set[str], outer: set[str], top: bool) -> set[str]:
        """Walk statements in order; returns `bound` plus the names they bind unconditionally."""
        bound = set(bound)
        for stmt in body:
            self.statement(stmt, bound, outer)
            for name in _binds(stmt):
                bound.add(name)
                self.inert.pop(name, None)  # rebound: no longer the helper judged below
                if top and isinstance(stmt, ast.FunctionDef):
                    reads = self.inert_reads(stmt)
                    if reads is not None:
                        self.inert[name] = reads
                if top and isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    self.imported.add(name)
                elif top:
                    self.own.add(name)
                    self.imported.discard(name)  # rebound: no longer the library
        return bound

    def statement(self, stmt: ast.stmt, bound: set[str], outer: set[str]) -> None:
        if isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                for name in _targets(t):
                    self.flag(stmt, "free-name", f"'del {name}' unbinds a module-level name (its value "
                              "would then come from whatever the module's globals hold)")
        in_decorator: set[int] = set()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in stmt.decorator_list:
                in_decorator.update(id(n) for n in ast.walk(d))
                root = _root(d)
                if isinstance(root, ast.Name) and root.id in self.own:
                    self.flag(d, "top-level-call", f"the decorator {root.id!r} is the candidate's own: applying "
                              "it runs candidate code at import")
        if isinstance(stmt, ast.ClassDef):
            for k in stmt.keywords:  # metaclass=... is called when the class statement runs
                if any(isinstance(n, ast.Name) and n.id in self.own for n in ast.walk(k.value)):
                    self.flag(k.value, "top-level-call", f"the class keyword {k.arg!r} names the candidate's own "
                              "object: it runs candidate code at import")
        for expr in _executed_now(stmt):
            local = {n for node in _walk_now(expr) if isinstance(node, ast.comprehension)
                     for n in _targets(node.target)}  # comprehension variables
            for node in _walk_now(expr):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self.check_read(node, bound | local, outer)
                elif isinstance(node, ast.Call):
                    self.check_call(node, id(node) in in_decorator, bound)
        if isinstance(stmt, ast.ClassDef):  # the body runs now, in a scope of its own
            self.block(stmt.body, set(), outer | bound, top=False)
            return
        # Bodies that may not run (if, loops, try, with, match): what they bind is not bound after
        # them, but reads inside them are checked in order.
        nested = [getattr(stmt, f, None) or [] for f in ("body", "orelse", "finalbody")]
        extra: set[str] = set()
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            extra = set(_targets(stmt.target))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            extra = {n for item in stmt.items if item.optional_vars is not None for n in _targets(item.optional_vars)}
        for body in nested:
            if body and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.block(body, bound | extra, outer, top=False)
        for h in getattr(stmt, "handlers", []):
            self.block(h.body, bound | ({h.name} if h.name else set()), outer, top=False)
        for case in getattr(stmt, "cases", []):
            captured = bound | _captures(case.pattern)
            if case.guard is not None:
                for node in _walk_now(case.guard):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                        self.check_read(node, captured, outer)
                    elif isinstance(node, ast.Call):
                        self.check_call(node, False, captured)
            self.block(case.body, captured, outer, top=False)

    def check_read(self, node: ast.Name, bound: set[str], outer: set[str]) -> None:
        name = node.id
        if name in bound or name in outer or name in ALLOWED_BUILTINS:
            return
        self.flag(node, "free-name", f"{name!r} is not bound at this point (import it, define it, or "
                  "use an allowed builtin; a name the candidate does not bind may hold anything at run time)")

    def inert_reads(self, fn: ast.FunctionDef) -> set[str] | None:
        """The global names an undecorated top-level function reads, when it is inert: its defaults are
        literal constants, its body defines no function, lambda or class, does not yield or declare
        globals, computes no callee, and reads none of the candidate's functions, classes or lambdas.
        None when it is not inert. Called at
        import where `_runs_library_only` says so, it runs what the same lines would run at top level
        (Triton's tutorial builds its autotune configs this way: `configs=get_autotune_config()`)."""
        if fn.decorator_list or not all(isinstance(d, ast.Constant) for d in
                                        [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]):
            return None  # a default is bound when the def runs: `def f(k=kernel)` would hand its body a kernel
        local = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        local |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        reads: set[str] = set()
        for stmt in fn.body:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Yield,
                                     ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
                    return None
                if isinstance(node, ast.Call) and not isinstance(_root(node.func), (ast.Name, ast.Constant)):
                    return None  # a computed callee
                if isinstance(node, ast.Name):
                    if isinstance(node.ctx, ast.Load):
                        if node.id in self.callables:
                            return None
                        reads.add(node.id)
                    else:
                        local.add(node.id)
        return reads - local

    def _runs_library_only(self, call: ast.Call, bound: set[str]) -> bool:
        """A call, at this point of the import, of an inert helper that reads only imports not rebound
        since and builtins the candidate has not rebound (judged at the call: a later `print = launch`
        changes it), with arguments that name nothing of the candidate's: so its locals hold only what
        libraries, builtins and literals made, none of the candidate's code, and every callee in it is
        library code, as at top level. An own global (`K = kernel`, an alias the callable set misses)
        is not readable from it."""
        func = call.func
        reads = self.inert.get(func.id) if isinstance(func, ast.Name) else None
        if reads is None or reads & self.own or reads & self.callables:
            return False
        if not all(r in self.imported and r in bound or r in ALLOWED_BUILTINS for r in reads):
            return False
        return not any(isinstance(n, ast.Name) and (n.id in self.own or n.id in self.callables)
                       for a in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(a))

    def check_call(self, call: ast.Call, in_decorator: bool, bound: set[str]) -> None:
        root = _root(call.func)
        if isinstance(root, ast.Constant):
            pass  # a literal's method ('x'.upper()): no candidate code
        elif self._runs_library_only(call, bound):
            pass  # an inert helper whose every global is bound by now: it runs library code only
        elif not isinstance(root, ast.Name) or root.id in self.own or not (
                root.id in self.imported or root.id in ALLOWED_BUILTINS):
            # Only a library (an import) or a builtin may be called at import: a name bound by a
            # loop, a comprehension or the candidate may hold the candidate's own code.
            what = f"{root.id!r}" if isinstance(root, ast.Name) else "a computed callee"
            self.flag(call, "top-level-call", f"the module's top-level code calls {what}: the candidate's own "
                      "code may run only when the verifier builds and calls ModelNew, not at import")
            return
        if in_decorator:
            return  # decorator arguments (heuristics, autotune configs) are stored, not called
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for node in _walk_now(arg):
                if isinstance(node, ast.Lambda) or (isinstance(node, ast.Name) and node.id in self.callables):
                    self.flag(call, "top-level-call", "the module's top-level code hands the candidate's own "
                              "function, class or a lambda to a call, which may run it at import")
                    return


def _global_reads(tree_source: str) -> list[tuple[str, int]]:
    """(name, line) of every global name read inside a function, lambda or comprehension body."""
    out: list[tuple[str, int]] = []
    table = symtable.symtable(tree_source, "<candidate>", "exec")

    def walk(t: symtable.SymbolTable) -> None:
        if t.get_type() == "function":
            for s in t.get_symbols():
                if s.is_global() and s.is_referenced():
                    out.append((s.get_name(), t.get_lineno()))
        for c in t.get_children():
            walk(c)

    walk(table)
    return out


def check_names(tree: ast.Module, source: str) -> list[NameProblem]:
    """The free-name rules of the module docstring over a parsed candidate (helpers already stripped)."""
    callables: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            callables.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            callables.update(n for t in node.targets for n in _targets(t))
    walker = _TopLevel(callables)
    final = walker.block(tree.body, set(), set(), top=True)
    problems = list(walker.problems)
    seen: set[str] = set()
    for name, line in _global_reads(source):
        if name in final or name in ALLOWED_BUILTINS or name in seen:
            continue
        seen.add(name)
        problems.append(NameProblem(_first_use(tree, name) or line, "free-name",
                                    f"{name!r} is used but never bound unconditionally at the module's top "
                                    "level (import it or define it there; a name the candidate does not "
                                    "bind may hold anything at run time)"))
    return problems


def _first_use(tree: ast.Module, name: str) -> int | None:
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    return min(lines) if lines else None
