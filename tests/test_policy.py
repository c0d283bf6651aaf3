"""Gate 1: the static policy (AST allow-list), rule by rule, with line numbers."""

import pytest

from kgym.verify.policy.policy import check_source

HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"
MODEL = "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"


def check(body: str):
    return check_source(HEADER + body + MODEL)


def test_clean_candidate_passes():
    r = check("")
    assert r.ok, r.reason


@pytest.mark.parametrize("stmt", ["import os", "import sys", "import subprocess", "import ctypes", "import socket",
                                  "import threading", "import multiprocessing", "import gc", "import inspect",
                                  "import importlib", "import builtins", "import numpy", "from os import path",
                                  "import torch._C", "from torch import _C", "import torch.utils._python_dispatch",
                                  "from torch._dynamo import config", "import time"])
def test_forbidden_imports(stmt):
    r = check(stmt + "\n")
    assert not r.ok
    assert r.violations[0].line == 5, r.reason


@pytest.mark.parametrize("expr", ["eval('1')", "exec('x=1')", "compile('1', 'f', 'eval')", "open('f')",
                                  "__import__('os')", "globals()", "vars()", "breakpoint()", "exit(0)"])
def test_forbidden_builtins(expr):
    r = check(f"y = {expr}\n")
    assert not r.ok and r.violations[0].rule == "name", r.reason


@pytest.mark.parametrize("expr", ["torch.ops.aten.relu", "torch._C._get_dispatch_mode", "torch.compile(f)",
                                  "x.numpy()", "x.tolist()", "x.item()", "torch.from_numpy(a)",
                                  "torch.cuda.Event", "torch.cuda.synchronize()", "torch.utils.dlpack",
                                  "torch.serialization.os", "triton.runtime.driver", "torch.library.custom_op",
                                  "x.untyped_storage()", "torch.cuda.set_per_process_memory_fraction(1.0)"])
def test_forbidden_attributes(expr):
    r = check(f"def f(x, a):\n    return {expr}\n")
    assert not r.ok, expr
    assert r.violations[0].line == 6


@pytest.mark.parametrize("expr", ["().__class__.__base__.__subclasses__()", "f.__globals__", "f.__code__",
                                  "x.__dict__", "__builtins__"])
def test_dunder_escapes(expr):
    r = check(f"def g(f, x):\n    return {expr}\n")
    assert not r.ok and r.violations[0].rule in ("dunder", "name"), r.reason


def test_getattr_with_computed_name_is_rejected_but_constant_is_checked():
    assert not check("def f(m):\n    return getattr(m, 'Ev' + 'ent')\n").ok
    assert not check("def f(m):\n    return getattr(torch.cuda, 'Event')\n").ok
    assert check("def f(m):\n    return getattr(m, 'weight')\n").ok


def test_monkeypatching_a_module_is_rejected():
    r = check("torch.cuda.Event = object\n")
    assert not r.ok and r.violations[0].rule in ("monkeypatch", "attribute")
    r = check("tl.load = None\n")
    assert not r.ok and r.violations[0].rule == "monkeypatch"


def test_private_attribute_allowed_only_on_self():
    assert check("class A:\n    def f(self):\n        return self._cache\n").ok
    assert not check("def f(x):\n    return x._base\n").ok


def test_reference_helpers_are_stripped_not_punished():
    src = (HEADER + "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
           "def get_inputs():\n    return [torch.randn(4)]\n"
           "def get_init_inputs():\n    return []\n" + MODEL)
    r = check_source(src)
    assert r.ok, r.reason
    assert set(r.stripped) == {"Model", "get_inputs", "get_init_inputs"}
    assert "torch.relu" not in r.source
    # line numbers of what is kept do not move
    line = "class ModelNew(nn.Module):"
    assert r.source.splitlines().index(line) == src.splitlines().index(line)


def test_subclassing_the_reference_is_rejected():
    src = HEADER + "class Model(nn.Module):\n    pass\nclass ModelNew(Model):\n    pass\n"
    r = check_source(src)
    assert not r.ok and any(v.rule == "subclass" for v in r.violations)


def test_missing_model_new_and_syntax_error():
    assert any(v.rule == "structure" for v in check_source(HEADER).violations)
    r = check_source("def f(:\n")
    assert not r.ok and r.violations[0].rule == "syntax" and r.violations[0].line == 1


def test_reason_names_lines():
    r = check("import os\ny = eval('1')\n")
    assert "line 5" in r.reason and "line 6" in r.reason


@pytest.mark.parametrize("stmt", ["y = torch.nn.functional.np", "y = torch.cuda.tunable.mp",
                                  "from torch.nn.functional import np", "F2 = torch.nn.functional\ny = F2.np",
                                  "y = [torch.nn.functional][0].np", "y = getattr(torch.nn.functional, 'np')",
                                  "y = torch.serialization.os"])
def test_modules_outside_the_allow_list_are_refused_under_any_name(stmt):
    r = check(stmt + "\n")
    assert not r.ok, stmt
    assert r.violations[0].rule in ("module", "attribute", "getattr"), r.reason


def test_allowed_module_chains_pass():
    assert check("y = tl.math.exp\nz = torch.nn.functional.relu\nw = torch.cuda.is_available()\n").ok


def test_dunder_strings_and_dunder_methods_are_refused():
    r = check("R = type('Raw', (), {'__array_interface__': 1})\n")
    assert not r.ok and r.violations[0].rule == "dunder"
    r = check("class A:\n    def __del__(self):\n        pass\n")
    assert not r.ok and "__del__" in r.reason


@pytest.mark.parametrize("stmt", ["from torch import cuda\ny = cuda.tunable.mp",
                                  "from torch import cuda\ny = cuda.torch.nn.functional.np",
                                  "from torch import torch as T\ny = T.nn.functional.np",
                                  "y = dict(__array_interface__=1)"])
def test_module_chains_from_from_imports_and_dunder_keywords_are_refused(stmt):
    r = check(stmt + "\n")
    assert not r.ok, stmt


def test_the_policy_never_imports_a_module_the_candidate_names_in_the_parent():
    # `import venv.__main__ as vm; vm.x`: following the chain imported venv.__main__ in the trusted
    # parent, whose top level ran venv's main and raised SystemExit (the verifier's process exited).
    import sys

    name = "venv.__main__"
    was = sys.modules.pop(name, None)
    try:
        result = check_source("import venv.__main__ as vm\nX = vm.anything\n" + HEADER + MODEL)
        assert not result.ok and "import of 'venv.__main__' is not allowed" in result.reason, result.reason
        assert name not in sys.modules
    finally:
        if was is not None:
            sys.modules[name] = was


def test_sources_too_deep_or_too_large_to_check_are_refused_not_raised():
    deep = check_source("x = " + "-" * 200_000 + "1\n" + HEADER + MODEL)
    assert not deep.ok and "nests expressions too deeply" in deep.reason, deep.reason
    long_sum = check_source("x = 1" + "+1" * 100_000 + "\n" + HEADER + MODEL)
    assert not long_sum.ok and "too deeply" in long_sum.reason, long_sum.reason
    huge = check_source(HEADER + MODEL + "#" * 1_000_001)
    assert not huge.ok and "the limit is 1,000,000" in huge.reason, huge.reason


@pytest.mark.parametrize("body", ["def f(self):\n    return self._compile_and_exec\n",
                                  "class K:\n    @staticmethod\n    def f(self):\n        return self._x\n",
                                  "G = lambda self: self._x\n"],
                         ids=["plain_function", "staticmethod", "lambda"])
def test_private_attributes_of_a_self_that_is_not_a_methods_instance_are_refused(body):
    # A plain function's parameter named self takes any object: Triton's rewriter was one (2026-12-04).
    r = check(body)
    assert not r.ok and "private attribute" in r.reason, r.reason


def test_private_attributes_of_a_methods_own_self_stay_legal_in_closures_too():
    r = check("class Helper:\n    def __init__(self):\n        self._cache = {}\n"
              "    def get(self, k):\n        f = lambda: self._cache\n        return f().get(k)\n")
    assert r.ok, r.reason


@pytest.mark.parametrize("first, ok", [
    ("# -*- coding: utf-8 -*-\n", True), ("# coding=utf8\n", True),
    ("#!/usr/bin/env python\n# vim: set fileencoding=UTF-8 :\n", True),
    ("# -*- coding: latin-1 -*-\n", False), ("#!/bin/python\n# coding: cp1252\n", False),
    ("x = 1  # coding: latin-1\n", True), ("x = 1\n# coding: latin-1\n", True)])
def test_only_a_utf8_coding_declaration_is_accepted(first, ok):
    """The child imports the text as a UTF-8 file, and an import decodes by a PEP 263 comment: any other
    encoding would run another program than the text checked (verifier 20). A declaration is a whole-line
    comment on line 1, or on line 2 after a comment or blank line 1 (Python's own rule)."""
    r = check_source(first + HEADER + MODEL)
    assert r.ok is ok, r.violations
    if not ok:
        assert r.violations[0].rule == "encoding" and "UTF-8" in r.reason


def test_helpers_are_blanked_on_python_lines_and_the_run_text_is_reparsed():
    """A form feed in a comment is one Python line but two for str.splitlines: the copy of the
    reference's helper is blanked whole, the lines around it kept, and line numbers are unchanged."""
    helper = "def get_inputs():\n    return [1]\n"
    r = check_source(HEADER + "# a\x0cb\n" + helper + MODEL)
    assert r.ok and r.stripped == ("get_inputs",), r.violations
    lines = r.source.split("\n")
    assert lines[4] == "# a\x0cb" and lines[5] == lines[6] == "" and lines[8] == "class ModelNew(nn.Module):"


def test_text_no_utf8_file_can_hold_is_refused():
    r = check_source(HEADER + "# \ud800\n" + MODEL)
    assert not r.ok and r.violations[0].rule == "encoding" and "not UTF-8" in r.reason
