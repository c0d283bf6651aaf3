"""Episodes: single-turn and multi-turn repair episodes, groups of answers, and a TRL adapter.

    from kgym.episodes import Evaluator, KernelEnv, EpisodeConfig
    env = KernelEnv(Evaluator(verifier), EpisodeConfig(max_submissions=4, max_turns=10))
    messages = env.reset(task, "repair")           # system + user; tools: env.tools (OpenAI form)
    step = env.step({"role": "assistant", "content": "", "tool_calls": [...]})
    ...                                              # until step.done; env.result() -> EpisodeResult

`extract.py` the code-block rules, `budget.py` token estimates and trimming, `feedback.py` what
the tools say about a verdict, `evaluate.py` ids and the verdict cache, `tools.py` the three repair
tools and their limits, `single.py` single-turn scoring, `env.py` reset/step, `rollout.py` driving
episodes with a policy, `group.py` group post-processing, `mix.py` the single/repair mix,
`trl_adapter.py` TRL's reward function, environment and dataset (needs the `rl` extra). Nothing here
but `trl_adapter.py` imports TRL, transformers or datasets.
"""

from kgym.episodes.budget import estimate_tokens, tokenizer_counter, trim_to_budget
from kgym.episodes.env import EpisodeConfig, KernelEnv, StepResult
from kgym.episodes.evaluate import Evaluator, evaluation_id_for
from kgym.episodes.extract import Extraction, extract_code
from kgym.episodes.group import GROUP_SIZE, GroupConfig, GroupResult, score_group
from kgym.episodes.mix import ModeMix
from kgym.episodes.result import END_REASONS, MODES, EpisodeResult, Evaluation
from kgym.episodes.rollout import rollout, rollout_group
from kgym.episodes.single import SingleTurnScore, score_answer
from kgym.episodes.tools import TOOL_NAMES, RepairTools, ToolCall, ToolResult, parse_tool_call

__all__ = ["END_REASONS", "GROUP_SIZE", "MODES", "TOOL_NAMES", "EpisodeConfig", "EpisodeResult", "Evaluation",
           "Evaluator", "Extraction", "GroupConfig", "GroupResult", "KernelEnv", "ModeMix", "RepairTools",
           "SingleTurnScore", "StepResult", "ToolCall", "ToolResult", "estimate_tokens", "evaluation_id_for",
           "extract_code", "parse_tool_call", "rollout", "rollout_group", "score_answer", "score_group",
           "tokenizer_counter", "trim_to_budget"]
