"""The static "keeps a PyTorch op" check: does the answer's forward() still compute with PyTorch?

An answer keeps a PyTorch op when `ModelNew.forward` — or a function or method it calls, followed
through the module — calls a torch layer held by the module (`self.conv(x)` where `__init__` built
`nn.Conv2d`), a torch or functional op (`torch.matmul`, `F.relu`, `torch.nn.functional.gelu`), a
tensor math method (`x.sum()`, `x.exp()`), or does arithmetic or `@` on tensors it was given.
Allocation, views, copies, shape queries and Triton launches (`kernel[grid](...)`) do not count.
Static AST inspection only, as the study did: it can be fooled (`getattr`, aliases built at run time)
and says nothing about what ran; the verifier's isolation gate is what decides at run time.
Source that does not parse is not a hybrid (it fails the compile gate anyway).
"""

from __future__ import annotations

import ast

# torch.* / tensor methods that allocate, view, copy or describe: not compute.
NOT_COMPUTE = frozenset({
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "tensor", "as_tensor", "from_numpy", "device", "dtype", "Size", "no_grad", "is_tensor",
    "view", "view_as", "reshape", "reshape_as", "contiguous", "flatten", "unflatten", "permute", "transpose", "t",
    "movedim", "moveaxis", "swapaxes", "swapdims", "unsqueeze", "squeeze", "expand", "expand_as", "narrow",
    "select", "split", "chunk", "unbind", "as_strided",
    "size", "dim", "numel", "stride", "storage_offset", "is_contiguous", "element_size", "data_ptr", "item",
    "to", "cuda", "cpu", "float", "half", "double", "type", "clone", "copy_", "detach", "requires_grad_",
    "fill_", "zero_", "new_empty", "new_zeros", "new_ones", "new_full", "get_device", "is_cuda", "tolist",
    "cat", "stack",  # copies, not arithmetic
})
_TORCH_ROOTS = frozenset({"torch", "F", "nn", "functional"})
# Names whose methods are never tensor math (modules of the answer's host code).
_NOT_TENSORS = frozenset({"triton", "tl", "math", "os", "np", "numpy", "functools", "itertools", "random"})


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _torch_aliases(tree: ast.Module) -> set[str]:
    names = set(_TORCH_ROOTS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "torch":
                    names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            for a in node.names:
                names.add(a.asname or a.name)
    return names - {"triton", "tl"}


def _layer_attrs(cls: ast.ClassDef, torch_names: set[str]) -> set[str]:
    """`self.x = nn.Something(...)` in the class: attributes holding a torch layer."""
    attrs = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if _root_name(node.value.func) in torch_names:
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        attrs.add(t.attr)
    return attrs


def _keeps(fn: ast.FunctionDef, torch_names: set[str], layers: set[str], tensors: set[str]) -> tuple[bool, list[str]]:
    """(keeps an op, names of module functions / self methods it calls)."""
    called: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return True, called
        if isinstance(node, ast.BinOp) and any(isinstance(s, ast.Name) and s.id in tensors
                                               for s in (node.left, node.right)):
            return True, called
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Subscript):  # kernel[grid](...): a Triton launch
            continue
        if isinstance(f, ast.Name):
            called.append(f.id)
            continue
        if not isinstance(f, ast.Attribute):
            continue
        root = _root_name(f)
        if isinstance(f.value, ast.Name) and f.value.id == "self":
            if f.attr in layers:
                return True, called
            called.append("self." + f.attr)
            continue
        if root in torch_names:
            if f.attr not in NOT_COMPUTE:
                return True, called
            continue
        if root is None or root in _NOT_TENSORS:
            continue
        if f.attr not in NOT_COMPUTE and not f.attr.startswith("_"):
            # A method on something else: a tensor math method (x.sum(), x.exp(), x.relu()).
            return True, called
    return False, called


def keeps_torch_op(source: str | None) -> bool:
    """True when the answer's forward() (or what it calls) keeps a PyTorch op; see module docstring."""
    if not source:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    torch_names = _torch_aliases(tree)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    cls = classes.get("ModelNew") or next((c for c in classes.values() if c.name != "Model"), None)
    if cls is None:
        return False
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and not any(_root_name(d.func if isinstance(d, ast.Call) else d) in ("triton", "tl")
                             for d in n.decorator_list)}
    layers = _layer_attrs(cls, torch_names)
    todo, seen = [("self.forward", methods.get("forward"))], set()
    while todo:
        name, fn = todo.pop()
        if fn is None or name in seen:
            continue
        seen.add(name)
        # Arithmetic counts on forward()'s own arguments (the inputs); a helper's arguments are as
        # often sizes (n + BLOCK - 1) as tensors, so there only calls count.
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs} - {"self"} if name == "self.forward" else set()
        keeps, called = _keeps(fn, torch_names, layers, params)
        if keeps:
            return True
        for c in called:
            todo.append((c, methods.get(c[5:]) if c.startswith("self.") else functions.get(c)))
    return False
