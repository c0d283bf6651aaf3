"""kgym: a verification farm and RL gym for LLM-written Triton kernels.

`kgym.verify` decides whether a candidate is honest, correct and fast; `kgym.reward` turns that
verdict into a number. Importable without Ray, vLLM or a GPU.
"""

__version__ = "0.1.0"
