"""No forward reads state a previous forward wrote (issue 29, work cached by the first forward).

The first forward the harness makes is the nominal hidden case: checked, never timed. Work it did
once and left in kept state (the reference's weight-only `sigmoid(w)` written into a buffer behind a
Python flag) was free for every later forward: the timed runs are held to the last verified
forward's launches, which already skipped it (reward 0.5 on the CPU). A launch rule cannot close
this (a flag in a kept buffer, read by one kernel, changes no launch); the state itself is judged.
In the candidate's process (`child.py`), around every forward the harness makes:

- at load (`capture`), once ModelNew is built: the storages of every tensor reachable from the
  candidate (`reachable`: the model's attributes, registered or not, submodules, containers in them,
  the classes and functions the candidate's module defines, their defaults and closures, its
  globals) are copied byte for byte: the state after load;
- after every verified forward and after every timed batch (`after_forward`): every storage of the
  state after load is compared with its copy (`bitwise.same` on byte views). One that holds a
  parameter and changed fails the candidate (isolation): a forward may not write its parameters.
  Any other changed storage, and every storage reachable now that was not at load (a tensor a
  forward made and kept), is scratch from then on;
- before every forward (`prepare`): every scratch storage is poisoned (all bytes 0xFF: NaN in every
  floating dtype, -1 in integers, an invalid bool); before every timed run, where nothing is
  compared run by run (the timed batch is profiled, and the comparison is no op a forward may show),
  every storage of the state after load is also put back from its copy, so nothing a timed run
  wrote reaches the next (a cache kept for the timed runs only, or restored before a comparison).
An honest workspace or preallocated output, overwritten by every forward, does not notice; a constant
built at construction and only read is never written, so it stays as it was; a cache written once
and read later reads poison and fails the hidden cases or the checked timed runs. A reference whose
forward updates buffers of its own (BatchNorm's running statistics: models run in training mode, so
they update and the output uses the batch's statistics) is mirrored honestly: buffers are scratch,
never refused.

Alive, not only reachable (2026-12-07): the walk cannot enter every object that holds a tensor (a
suspended generator's frame, a builtin's bound method such as `list.append`, an iterator, a class of
torch's), and a cache kept in a generator's frame passed with the static policy on (reward 0.5). So
the guard also notes every storage an op returns while the candidate is imported and built or inside
a forward (`MadeStorages`, a weak reference each: nothing is kept alive by it), and every such storage
still alive at a capture, a prepare or a comparison counts as kept, wherever it is held: the state after
load if it was alive then, scratch if a forward made it. A storage that reaches a tensor only through
an op (an allocation, a view, `set_` over a storage made outside the dispatcher) is noted, so where a
candidate hides a reference no longer matters.

Storages, not tensors: a cache may live in the bytes of a kept storage outside the kept view, so a
whole storage is copied, compared, poisoned and restored. Storages of the buffers lent for the
current command (inputs, output, check buffer) are the parent's to check and are left alone.

Everything runs between the harness's calls (no candidate code can run there: outside.py), in the
guard's "harness" phase (guard.HARNESS_OPS, untracked by the provenance rule), and reads candidate
objects only through exact types, accessors and descriptors bound at import: no attribute lookup,
iteration protocol or `__hash__` of a candidate object runs (the one dict lookup by name, of
`__module__` in a class's own dict, meets only str keys with the static policy on). More than
MAX_ITEMS objects, or a kept tensor subclass, is refused: the harness could not check them.

Not covered: Python values (a cached float, a list of numbers: the same work done in Python is
refused only where it needs torch or Triton to reach the output), storages no op of the candidate's
returned (made before its import: torch's or Triton's own tensors, reachable with the static policy
off), and memory no kept tensor views (an address kept as an int into freed memory; the rest of a kept
storage's allocation, reached by an out-of-bounds offset: on the CPU Triton's interpreter keeps every load
and store inside its launch's storages, bounds.py; on a GPU it is open, tests/exploits/test_lent_tail_carry.py).
"""

from __future__ import annotations

import collections
import sys
import time
import types
from collections import deque
from dataclasses import dataclass
from typing import Any

import torch

from kgym.verify import accessors
from kgym.verify.bitwise import same

MAX_DEPTH = 12  # hops through plain containers and objects (each nn.Module starts again at 0)
MAX_ITEMS = 200_000  # objects and container items looked at per walk; more is refused, not skipped
POISON_BYTE = 0xFF  # NaN in fp16/bf16/fp32/fp64 (and fp8), -1 in signed integers

_type, _id = type, id
_perf_counter = time.perf_counter
_module_dict = types.ModuleType.__dict__["__dict__"].__get__
_Parameter = torch.nn.Parameter
_Module = torch.nn.Module
_TensorBase = torch._C.TensorBase
_strided = torch.strided
_uint8 = torch.uint8
_empty = torch.empty
_set = _TensorBase.set_
_clone = _TensorBase.clone
_mro = type.__dict__["__mro__"].__get__
_class_dict = type.__dict__["__dict__"].__get__
_proxy_get = types.MappingProxyType.get
_proxy_items = types.MappingProxyType.items
_dict_items = dict.items
_dict_get = dict.get
_dict_len = dict.__len__
_OrderedDict = collections.OrderedDict
_NoneType = type(None)
_MISSING = object()
_list_iter, _tuple_iter = list.__iter__, tuple.__iter__
_set_iter, _frozenset_iter = set.__iter__, frozenset.__iter__
_getset_get = types.GetSetDescriptorType.__get__
_Function = types.FunctionType
_fn_globals = _Function.__dict__["__globals__"].__get__
_fn_defaults = _Function.__dict__["__defaults__"].__get__
_fn_kwdefaults = _Function.__dict__["__kwdefaults__"].__get__
_fn_closure = _Function.__dict__["__closure__"].__get__
_fn_dict = _Function.__dict__["__dict__"].__get__
_cell_contents = types.CellType.__dict__["cell_contents"].__get__
_method_func = types.MethodType.__dict__["__func__"].__get__
_method_self = types.MethodType.__dict__["__self__"].__get__
_static_func = staticmethod.__dict__["__func__"].__get__
_class_func = classmethod.__dict__["__func__"].__get__
_fget, _fset = property.__dict__["fget"].__get__, property.__dict__["fset"].__get__
_fdel = property.__dict__["fdel"].__get__
_StorageBase = torch._C.StorageBase
_weak_ref = _StorageBase._weak_ref
_expired = _StorageBase._expired
_free_weak_ref = _StorageBase._free_weak_ref
_from_weak_ref = _StorageBase._new_with_weak_ptr
_storage_device = _StorageBase.__dict__["device"].__get__
_storage_ptr = _StorageBase.data_ptr
_storage_nbytes = _StorageBase.nbytes

# Types whose instances hold no tensor the walk could reach: compared by id (hashing a type could run a
# candidate metaclass's __hash__).
_LEAVES = frozenset(_id(t) for t in (
    int, float, bool, complex, str, bytes, type(None), type(Ellipsis), type(NotImplemented),
    torch.dtype, torch.device, torch.layout, torch.memory_format, types.ModuleType,
    types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType,
    types.MethodDescriptorType, types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.CodeType))

# What the walk does with an object, by its type (`_kind`).
_TENSOR, _CLASS, _FUNCTION, _METHOD, _STATIC, _CLASSMETHOD, _PROPERTY = range(7)
_DICT, _LIST, _TUPLE, _SET, _FROZENSET, _OBJECT, _LEAF = range(7, 14)
# An nn.Module's own containers: its state (walked as attributes of the module) and its hook dicts
# (walked only when they hold a hook).
_MODULE_STATE = frozenset({"_parameters", "_buffers", "_modules"})
_MODULE_INTERNALS = _MODULE_STATE | frozenset({
    "_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
    "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"})
_ATTR, _ITEM, _INDEX, _KEY, _TYPE = range(5)  # the steps of a path (`_path_name`)


def _kind(t: type) -> int:
    if _id(t) in _LEAVES:
        return _LEAF
    if t is _Function:
        return _FUNCTION
    mro = _mro(t)
    if _TensorBase in mro:
        return _TENSOR
    if type in mro:  # a metaclass: the object is a class
        return _CLASS
    if t is types.MethodType:
        return _METHOD
    if t is staticmethod:
        return _STATIC
    if t is classmethod:
        return _CLASSMETHOD
    if t is property:
        return _PROPERTY
    if dict in mro:
        return _DICT
    if list in mro:
        return _LIST
    if tuple in mro:
        return _TUPLE
    if set in mro:
        return _SET
    if frozenset in mro:
        return _FROZENSET
    if types.ModuleType in mro:
        return _LEAF
    return _OBJECT


def _dict_descriptor(t: type) -> Any:
    """The descriptor Python made for `obj.__dict__` of instances of `t`, or None (slots, C types, or a
    `__dict__` that is anything else: never called)."""
    for c in _mro(t):
        desc = _proxy_get(_class_dict(c), "__dict__")
        if desc is not None:
            return desc if _type(desc) is types.GetSetDescriptorType else None
    return None


@dataclass
class Found:
    """One storage reachable from the candidate: a plain tensor viewing it and the first path to it."""
    tensor: torch.Tensor
    path: Any  # see `_path_name`
    param: bool  # an nn.Parameter views it

    @property
    def name(self) -> str:
        return _path_name(self.path)


StorageKey = tuple  # (device type, device index, first byte, one past the last byte)


def storage_key(t: torch.Tensor) -> StorageKey | None:
    """The storage behind a plain tensor, or None for one with no bytes to keep (empty, meta, sparse)."""
    dev = accessors.device(t)
    if dev.type == "meta" or accessors.layout(t) != _strided:
        return None
    start, end = accessors.storage_span(t)
    if start == 0 or end <= start:
        return None
    return dev.type, dev.index, start, end


def reachable(model: Any, candidate_globals: dict | None, injected: dict | None = None
              ) -> tuple[dict[StorageKey, Found], str | None]:
    """Every storage of a plain tensor reachable from the candidate's model and module, breadth first
    (the shortest path names it), by identity. Returns (storages, problem): a tensor subclass kept
    anywhere, or more than MAX_ITEMS items, is a problem (the harness cannot check what it holds).
    `injected`: the globals of Triton's CPU interpreter, which it copies into the candidate's module
    at the first launch (`np`, its builder, ~70 names): those objects are skipped (the static policy
    refuses reading an injected name; they would be most of the walk).

    It runs before every timed run, under the child's profile hook (every call costs an event), so it
    makes few calls per item: leaves are told by type with `is` before anything else, names are kept
    as (parent, step) pairs and written out only for tensors, and a module's empty hook dicts are
    passed over."""
    module_name = _dict_get(candidate_globals, "__name__") if candidate_globals is not None else None
    found: dict[StorageKey, Found] = {}
    seen: set[int] = set()
    # id(type) -> (type, kind, its instances' __dict__ descriptor, a module?): the type kept alive while its id is used
    kinds: dict[int, tuple[type, int, Any, bool]] = {}
    queue: deque[tuple[Any, Any, int]] = deque()
    items = 0
    classes_passed = [0]  # plain classes not the candidate's, counted at push (below)

    def candidate_class(cls: type) -> bool:
        m = _proxy_get(_class_dict(cls), "__module__")
        return module_name is not None and _type(m) is str and m == module_name

    def push(obj: Any, path: Any, depth: int) -> None:
        t = _type(obj)
        if t is int or t is str or t is bool or t is float or t is _NoneType or _id(t) in _LEAVES:
            return
        if depth > MAX_DEPTH:
            return
        i = _id(obj)
        if i in seen:
            return
        seen.add(i)
        if t is type and not candidate_class(obj):
            # A plain class of torch, Triton or builtins (a kernel's __globals__ reaches every builtin
            # type): taken off the queue it would be counted and passed over (`_CLASS` below), so it
            # is counted and passed over here, without a trip through the queue (under the child's
            # profile hook every call of that trip is an event: most of the walk for such classes).
            classes_passed[0] += 1
            return
        queue.append((obj, path, depth))

    if model is not None:
        push(model, "self", 0)
        push(_type(model), "type(self)", 0)
    if candidate_globals is not None:
        for key, value in _dict_items(candidate_globals):
            # the module's own dunders are the import system's (builtins, spec, loader): the policy
            # lets no candidate bind one
            if _type(key) is not str:
                push(value, "global ?", 0)
            elif not (key[:2] == "__" and key[-2:] == "__") and (
                    injected is None or _dict_get(injected, key, _MISSING) is not value):
                push(value, "global " + key, 0)
    too_many = (f"more than {MAX_ITEMS} objects are reachable from the candidate's model and module: kept "
                "state the harness cannot check (keep tables and caches out of forward's reach)")
    while queue:
        if items + classes_passed[0] > MAX_ITEMS:
            return found, too_many
        obj, path, depth = queue.popleft()
        items += 1
        t = _type(obj)
        entry = kinds.get(_id(t))
        if entry is None:
            k = _kind(t)
            entry = kinds[_id(t)] = (t, k, _dict_descriptor(t) if k == _OBJECT else None, _Module in _mro(t))
        kind = entry[1]
        d = depth + 1
        if kind == _TENSOR:
            if not accessors.is_plain_tensor(obj):
                return found, (f"the candidate keeps a tensor subclass at {_path_name(path)}: kept tensors must "
                               "be plain tensors (a subclass is refused, never inspected)")
            key = storage_key(obj)
            if key is None:
                continue
            param = t is _Parameter
            prev = found.get(key)
            if prev is None or (param and not prev.param):  # named after a parameter that views it
                found[key] = Found(obj, path, param)
        elif kind == _DICT:
            items += _dict_len(obj)
            for k, v in _dict_items(obj):
                tk, tv = _type(k), _type(v)
                if not (tk is str or tk is int):
                    push(k, (path, _KEY, None), d)
                if not (tv is int or tv is str or tv is bool or tv is float or tv is _NoneType):
                    push(v, (path, _ITEM, k), d)
        elif kind == _LIST or kind == _TUPLE or kind == _SET or kind == _FROZENSET:
            it = (_list_iter if kind == _LIST else _tuple_iter if kind == _TUPLE
                  else _set_iter if kind == _SET else _frozenset_iter)
            j = 0
            for v in it(obj):
                tv = _type(v)
                if not (tv is int or tv is str or tv is bool or tv is float or tv is _NoneType):
                    push(v, (path, _INDEX, j), d)
                j += 1
            items += j
        elif kind == _FUNCTION:
            if _fn_globals(obj) is not candidate_globals:
                continue  # torch's, Triton's, the interpreter's: not the candidate's state
            push(_fn_defaults(obj), (path, _ATTR, "__defaults__"), d)
            push(_fn_kwdefaults(obj), (path, _ATTR, "__kwdefaults__"), d)
            for j, cell in enumerate(_fn_closure(obj) or ()):
                try:
                    push(_cell_contents(cell), (path, _ATTR, f"<closure {j}>"), d)
                except ValueError:  # an empty cell
                    pass
            push(_fn_dict(obj), (path, _ATTR, "__dict__"), d)
        elif kind == _METHOD:
            push(_method_self(obj), (path, _ATTR, "__self__"), d)
            push(_method_func(obj), (path, _ATTR, "__func__"), d)
        elif kind == _STATIC:
            push(_static_func(obj), path, d)
        elif kind == _CLASSMETHOD:
            push(_class_func(obj), path, d)
        elif kind == _PROPERTY:
            push(_fget(obj), (path, _ATTR, "fget"), d)
            push(_fset(obj), (path, _ATTR, "fset"), d)
            push(_fdel(obj), (path, _ATTR, "fdel"), d)
        elif kind == _CLASS:
            if not candidate_class(obj):
                continue  # torch.nn.Module, Triton's classes: not the candidate's state
            for k, v in _proxy_items(_class_dict(obj)):
                push(v, (path, _ATTR, k), d)
            for base in _mro(obj):
                push(base, (path, _ATTR, "<base>"), d)
        elif kind == _OBJECT:
            push(t, (path, _TYPE, None), d)
            if entry[2] is None:
                continue
            inst = _getset_get(entry[2], obj, t)
            if _type(inst) is not dict:
                continue
            items += _dict_len(inst)
            if entry[3]:
                # a module's state is its own, however deep it is nested: its depth starts again,
                # and its parameters, buffers and submodules are named as attributes
                for k, v in _dict_items(inst):
                    tv = _type(v)
                    if tv is int or tv is str or tv is bool or tv is float or tv is _NoneType:
                        continue
                    if (tv is dict or tv is _OrderedDict) and _type(k) is str and k in _MODULE_INTERNALS:
                        if k in _MODULE_STATE:
                            items += _dict_len(v)
                            for k2, v2 in _dict_items(v):
                                push(v2, (path, _ATTR, k2), 0)
                        elif _dict_len(v):  # a hook dict: its hooks are functions, walked as such
                            push(v, (path, _ATTR, k), 0)
                    else:
                        push(v, (path, _ATTR, k), 0)
            else:
                for k, v in _dict_items(inst):
                    tv = _type(v)
                    if not (tv is int or tv is str or tv is bool or tv is float or tv is _NoneType):
                        push(v, (path, _ATTR, k), d)
    if items + classes_passed[0] > MAX_ITEMS:
        return found, too_many
    return found, None


def _path_name(path: Any) -> str:
    """A path kept as nested (parent, step, key) tuples, written out: self.store['gate'], global X[0]."""
    steps = []
    while type(path) is tuple:
        path, step, key = path
        if step == _ATTR:
            steps.append(f".{key}" if type(key) is str else ".?")
        elif step == _ITEM:
            steps.append(f"[{key!r}]" if type(key) is str else "[?]")
        elif step == _INDEX:
            steps.append(f"[{key}]")
        elif step == _KEY:
            steps.append("[key]")
        else:
            steps.append(".__class__")
    return (path if type(path) is str else "?") + "".join(reversed(steps))


@dataclass
class Kept:
    """A kept storage: a view of all its bytes (which keeps it alive while tracked) and, for the state
    after load, a copy of them then (None once it is scratch). Scratch a forward made holds no view
    (None): it would keep alive what the candidate let go, and the made storages count as kept while
    alive; each prepare poisons it through the view its walk just found."""
    name: str
    view: torch.Tensor | None
    copy: torch.Tensor | None
    param: bool
    at_load: bool  # reachable when the candidate was built (kept alive here: it was alive anyway)
    poison: int  # the word of POISON_BYTEs in the view's dtype


# Words a storage's bytes are viewed as: the widest that divides its size and start (the comparison
# of 16 MiB took 13 ms as bytes and 2.4 ms as int64 words on one CPU core). All bits set in each.
_WORDS = ((8, torch.int64, -1), (4, torch.int32, -1), (2, torch.int16, -1), (1, _uint8, POISON_BYTE))


def _bytes_view(t: torch.Tensor, key: StorageKey) -> tuple[torch.Tensor, int]:
    """A tensor over every byte of the storage behind `t` (allocation and set_ only), and the word
    whose bytes are all POISON_BYTE."""
    nbytes = key[3] - key[2]
    size, dtype, poison = next(w for w in _WORDS if nbytes % w[0] == 0 and key[2] % w[0] == 0)
    view = _set(_empty(0, dtype=dtype, device=accessors.device(t)), accessors.untyped_storage(t), 0,
                (nbytes // size,), (1,))
    return view, poison


def _overlaps(key: StorageKey, keys: Any) -> bool:
    """Do the bytes of `key` overlap those of any of `keys` (on the same device)?"""
    return any(key[0] == k[0] and key[1] == k[1] and key[2] < k[3] and k[2] < key[3] for k in keys)


def lent_keys(tensors: list[Any]) -> list[StorageKey]:
    """The storages of the buffers lent for the current command (plain tensors only)."""
    keys = []
    for t in tensors:
        if accessors.is_plain_tensor(t):
            key = storage_key(t)
            if key is not None:
                keys.append(key)
    return keys


class MadeStorages:
    """Weak references to the storages the candidate's ops returned (the guard's `made`): at construction
    and inside forwards. `alive()` gives a byte view of each that is still alive (the view is made for
    the caller and holds the storage only as long as the caller keeps it); dead ones are let go."""

    def __init__(self) -> None:
        self.refs: dict[int, int] = {}  # storage address -> weak reference (a c10 weak pointer)

    def note(self, t: torch.Tensor) -> None:
        """A plain tensor an op of the candidate's returned: its storage is noted once."""
        s = accessors.untyped_storage(t)
        ptr = _storage_ptr(s)
        if ptr == 0:
            return
        old = _dict_get(self.refs, ptr)
        if old is not None:
            if not _expired(old):
                return
            _free_weak_ref(old)  # a dead storage's address, reused
        self.refs[ptr] = _weak_ref(s)

    def knows(self, ptr: int) -> bool:
        """Is the storage at `ptr` one an op of the candidate's returned, and still alive?"""
        ref = _dict_get(self.refs, ptr)
        return ref is not None and not _expired(ref)

    def alive(self) -> dict[StorageKey, Found]:
        found: dict[StorageKey, Found] = {}
        for ptr, ref in list(_dict_items(self.refs)):
            storage = None if _expired(ref) else _from_weak_ref(ref)
            if storage is None or _storage_ptr(storage) != ptr:
                _free_weak_ref(ref)
                del self.refs[ptr]
                continue
            nbytes = _storage_nbytes(storage)
            if nbytes == 0:
                continue
            dev = _storage_device(storage)
            view = _set(_empty(0, dtype=_uint8, device=dev), storage, 0, (nbytes,), (1,))
            found[(dev.type, dev.index, ptr, ptr + nbytes)] = Found(view, "a storage the candidate made and kept "
                                                                          "(held where no attribute reaches)", False)
        return found


class KeptState:
    """The candidate's kept storages across the forwards of one process (see the module docstring).
    `seconds` is the time spent here (walks, copies, comparisons, poison and restore)."""

    def __init__(self, guard: Any) -> None:
        self.guard = guard  # a guard.ComputeGuard: its "harness" phase while this works
        self.model: Any = None
        self.globals: dict | None = None
        self.loaded: dict[StorageKey, Kept] = {}  # the state after load, as long as no forward changed it
        self.scratch: dict[StorageKey, Kept] = {}
        self.injected: dict | None = None  # Triton's CPU interpreter's globals (`reachable`), where loaded
        self.seconds = 0.0
        self.made = MadeStorages()  # noted by the guard (`ComputeGuard.made`)
        guard.made = self.made

    def _reachable(self) -> tuple[dict[StorageKey, Found], str | None]:
        """What the walk reaches, and every storage the candidate's ops made that is still alive (the walk
        names it where it reaches it)."""
        found, problem = reachable(self.model, self.globals, self.injected)
        if problem is None:
            for key, f in _dict_items(self.made.alive()):
                if key not in found:
                    found[key] = f
        return found, problem

    def _phase(self, phase: str) -> None:
        self.guard.phase = phase

    def capture(self, model: Any, candidate_globals: dict | None) -> str | None:
        """At load, once ModelNew is built: copy the bytes of every reachable storage. A problem (a kept
        tensor subclass, too many objects) is returned, to fail the candidate."""
        t0 = _perf_counter()
        self.model, self.globals = model, candidate_globals
        interpreter = sys.modules.get("triton.runtime.interpreter")  # at load: nothing of the candidate's
        self.injected = _module_dict(interpreter) if _type(interpreter) is types.ModuleType else None
        self._phase("harness")
        try:
            found, problem = self._reachable()
            if problem is None:
                for key, f in found.items():
                    view, poison = _bytes_view(f.tensor, key)
                    self.loaded[key] = Kept(f.name, view, _clone(view), f.param, True, poison)
            return problem
        finally:
            self._phase("run")
            self.seconds += _perf_counter() - t0

    def prepare(self, lent: list[StorageKey], restore: bool) -> str | None:
        """Before a forward: poison every scratch storage (and, with `restore`, put every storage of the
        state after load back from its copy); a storage reachable now that was not at load is scratch."""
        t0 = _perf_counter()
        self._phase("harness")
        try:
            found, problem = self._reachable()
            if problem is not None:
                return problem
            self._track_new(found, lent)
            for key, k in self.scratch.items():
                if not _overlaps(key, lent):
                    if k.view is not None:
                        accessors.fill_(k.view, k.poison)
                    else:  # made by a forward: alive, so the walk found it (`_track_new`)
                        view, poison = _bytes_view(found[key].tensor, key)
                        accessors.fill_(view, poison)
                        del view
            if restore:
                for k in self.loaded.values():
                    accessors.copy_(k.view, k.copy)
            return None
        finally:
            self._phase("run")
            self.seconds += _perf_counter() - t0

    def after_forward(self, lent: list[StorageKey]) -> tuple[str | None, list[str]]:
        """After a verified forward or a timed batch: compare the state after load with its copies.
        Returns (problem, names that became scratch): a parameter a forward changed is the problem."""
        t0 = _perf_counter()
        self._phase("harness")
        try:
            changed: list[str] = []
            new: list[str] = []
            for key, k in list(self.loaded.items()):
                if same(k.view, k.copy):
                    continue
                if k.param:
                    changed.append(k.name)
                    continue
                k.copy = None
                del self.loaded[key]
                self.scratch[key] = k
                new.append(k.name)
            if changed:
                return (f"forward() changed the parameter {', '.join(changed[:3])} (or memory sharing its storage): "
                        "a forward may not write the model's parameters, and no forward may read what an earlier "
                        "one wrote"), new
            found, problem = self._reachable()
            if problem is not None:
                return problem, new
            new += self._track_new(found, lent)
            return None, new
        finally:
            self._phase("run")
            self.seconds += _perf_counter() - t0

    def _track_new(self, found: dict[StorageKey, Found], lent: list[StorageKey]) -> list[str]:
        """Storages reachable now that were not at load are scratch; scratch made by a forward that is no
        longer reachable is let go (a kept reference here would hold every forward's leftovers)."""
        new = []
        scratch = {key: k for key, k in self.scratch.items() if k.at_load or key in found}
        for key, f in found.items():
            if key in self.loaded or key in scratch or _overlaps(key, lent) or _overlaps(key, self.loaded):
                continue  # memory aliasing the state after load is compared, never poisoned
            scratch[key] = Kept(f.name, None, None, f.param, False, POISON_BYTE)
            new.append(f.name)
        self.scratch = scratch
        return new
