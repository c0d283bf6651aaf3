"""The repair tools and their limits: `RepairTools` runs submit_kernel, inspect_evaluation and
finalize for one episode; `parse_tool_call` turns an OpenAI-form tool call into a checked `ToolCall`.

Semantics (the names and parameters are `kgym.tasks.prompts.TOOLS`):
- submit_kernel(code): verifies the code, returns its evaluation id and a one-line status. At most
  `max_submissions` (default 4) per episode; a further call is refused with an error and verifies
  nothing. The same code twice gets the same id (verified once) but still counts as a submission.
- inspect_evaluation(evaluation_id): the details of an evaluation of this episode (first failing
  gate, traceback, cases, diff summary, timings), trimmed to the inspect token budget. An id this
  episode did not produce is an error.
- finalize(evaluation_id): ends the episode with that evaluation's reward minus the churn penalty for
  the submissions made (`kgym.reward`). With no submission at all the episode ends with reward 0; an
  unknown id while submissions exist is an error (the model can finalize a real one next).
- An evaluation kgym failed on (`Verdict.error`: the farm gave up, the verifier raised) is no verdict
  on the kernel: it is not a submission (neither the limit nor churn counts it; the model is told to
  submit again, which retries it; at most `max_submissions` are given back, so one episode asks for
  at most twice that many verifications), finalize refuses it (an error: finalize another, or resubmit), and
  an episode ended by a limit is scored on its last evaluation with a verdict (`last_scorable`).
  Why: an episode ending on an error is dropped from training, so finalizing an errored evaluation
  let a failing episode choose to be unscored and shed its negative reward (red team, 2026-12-07).
  Only an episode whose every evaluation failed inside kgym ends on an error (and is dropped).
- Every argument must be valid Unicode text (UTF-8-encodable): a JSON escape of a lone surrogate
  (`"\\ud800"`) decodes to a str that cannot be hashed, verified or written, and it raised out of
  submit_kernel, the env's step and the rollout's gather (red team, 2026-12-07). Such a call is an
  error the model reads, runs nothing and is not a submission.
Ids may be given in full or as a unique prefix of at least 8 characters. Errors are values
(`ToolResult.error`), never exceptions. `call` and `submit_kernel` are coroutines: a submission
awaits the evaluator (`Evaluator.evaluate`), so other episodes run while it is verified; its request
carries the episode's coordinates (`kgym.contract.Episode`). Does not count turns or build
messages: `env.py` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kgym.answers import encodes_as_utf8
from kgym.contract import Episode
from kgym.episodes.budget import TokenCounter, estimate_tokens, trim_to_budget
from kgym.episodes.evaluator import Evaluator, episode_request
from kgym.episodes.feedback import details_text, status_text
from kgym.episodes.result import Evaluation, evaluation_named, last_judged
from kgym.reward import RewardConfig, reward
from kgym.tasks.prompts import MAX_SUBMISSIONS, TOOLS
from kgym.tasks.task import Task

TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)
_PARAMS = {t["function"]["name"]: tuple(t["function"]["parameters"]["required"]) for t in TOOLS}
MIN_ID_PREFIX = 8


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, str]


@dataclass(frozen=True)
class ToolResult:
    content: str  # what the model reads
    error: bool = False
    done: bool = False  # finalize ended the episode
    evaluation: Evaluation | None = None  # submit_kernel: the new evaluation


def parse_tool_call(raw: Any, default_id: str) -> tuple[ToolCall | None, str]:
    """(call, "") for a well-formed call to a known tool, else (None, the error for the model).
    Accepts OpenAI's form ({"id", "type": "function", "function": {"name", "arguments": JSON text}})
    and the parsed form transformers gives (arguments as a dict)."""
    if not isinstance(raw, dict):
        return None, f"malformed tool call: expected an object, got {type(raw).__name__}"
    call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else default_id
    fn = raw.get("function")
    if raw.get("type", "function") != "function" or not isinstance(fn, dict):
        return None, "malformed tool call: expected {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}"
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None, "malformed tool call: the function has no name"
    if name not in TOOL_NAMES:
        return None, f"unknown tool {name[:80]!r}: the tools are {', '.join(TOOL_NAMES)}"
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            return None, f"malformed arguments for {name}: not valid JSON ({e.msg} at position {e.pos})"
        except RecursionError:  # the model's text must never raise out of the env (toolcalls.py says why)
            return None, f"malformed arguments for {name}: not valid JSON (nested too deeply)"
    if not isinstance(args, dict):
        return None, f"malformed arguments for {name}: expected a JSON object"
    wanted = _PARAMS[name]
    missing = [p for p in wanted if p not in args]
    extra = sorted(set(args) - set(wanted))
    if missing or extra:
        return None, (f"bad arguments for {name}: it takes exactly {', '.join(wanted)}"
                      + (f"; missing {', '.join(missing)}" if missing else "")
                      + (f"; unexpected {', '.join(extra[:5])}" if extra else ""))
    bad = [p for p in wanted if not isinstance(args[p], str)]
    if bad:
        return None, f"bad arguments for {name}: {', '.join(bad)} must be a string"
    return ToolCall(call_id, name, {p: args[p] for p in wanted}), ""


class RepairTools:
    """The state of one repair episode's tools: its evaluations, submissions and end."""

    def __init__(self, evaluator: Evaluator, task: Task, *, max_submissions: int = MAX_SUBMISSIONS,
                 inspect_token_budget: int = 1024, count_tokens: TokenCounter = estimate_tokens,
                 reward_config: RewardConfig = RewardConfig(), group_id: str | None = None,
                 sample_index: int = 0):
        self.evaluator = evaluator
        self.group_id = group_id  # with sample_index: the Episode of this episode's requests (None: untagged)
        self.sample_index = sample_index
        self.task = task
        self.max_submissions = max_submissions
        self.inspect_token_budget = inspect_token_budget
        self.count_tokens = count_tokens
        self.reward_config = reward_config
        self.evaluations: list[Evaluation] = []
        self.submissions = 0
        self.finalized: Evaluation | None = None
        self.given_back = 0  # errored submissions not counted (at most max_submissions: verifications stay bounded)
        self.done = False

    # -- lookups -------------------------------------------------------------------------------
    def find(self, evaluation_id: str) -> Evaluation | None:
        key = evaluation_id.strip()
        if any(e.evaluation_id == key for e in self.evaluations):
            return evaluation_named(self.evaluations, key)
        if len(key) >= MIN_ID_PREFIX:
            hits = {e.evaluation_id for e in self.evaluations if e.evaluation_id.startswith(key)}
            if len(hits) == 1:
                return evaluation_named(self.evaluations, hits.pop())
        return None

    @property
    def last_scorable(self) -> Evaluation | None:
        """What an episode ended by a limit is scored on: the last evaluation with a verdict, else the last
        evaluation (every one failed inside kgym: the episode ends on that error), else None."""
        return last_judged(self.evaluations)

    def _unknown(self, evaluation_id: str) -> str:
        known = ", ".join(dict.fromkeys(e.evaluation_id for e in self.evaluations)) or "none yet"
        return f"unknown evaluation id {evaluation_id[:64]!r}; this episode's evaluations: {known}"

    def episode_reward(self, evaluation: Evaluation) -> float:
        """The reward of ending on `evaluation`: its verdict's reward minus churn for the submissions made."""
        if evaluation.verdict.error is not None:
            return 0.0
        return reward(evaluation.verdict, self.reward_config, submissions=max(1, self.submissions))

    # -- the tools -----------------------------------------------------------------------------
    async def call(self, call: ToolCall, turn: int) -> ToolResult:
        if self.done:
            return ToolResult("error: the episode is over (finalize was called)", error=True)
        bad = [k for k, v in call.arguments.items() if not (isinstance(v, str) and encodes_as_utf8(v))]
        if bad:
            return ToolResult(f"error: {', '.join(bad)} of {call.name} is not valid Unicode text (an escaped lone "
                              f"surrogate such as \\ud800?); nothing was run", error=True)
        if call.name == "submit_kernel":
            return await self.submit_kernel(call.arguments["code"], turn)
        if call.name == "inspect_evaluation":
            return self.inspect_evaluation(call.arguments["evaluation_id"])
        return self.finalize(call.arguments["evaluation_id"])

    async def submit_kernel(self, code: str, turn: int) -> ToolResult:
        if self.submissions >= self.max_submissions:
            return ToolResult(f"error: submission limit reached ({self.max_submissions}); finalize one of your "
                              f"evaluations", error=True)
        if not code.strip():
            return ToolResult("error: submit_kernel needs the full source of the answer in `code`", error=True)
        self.submissions += 1
        episode = None if self.group_id is None else Episode(self.group_id, self.sample_index, turn)
        request = episode_request(self.task, code, episode)
        verdict = await self.evaluator.evaluate(request)
        eid = request.evaluation_id
        ev = Evaluation(eid, turn, self.submissions, code, verdict, reward(verdict, self.reward_config))
        self.evaluations.append(ev)
        if verdict.error is not None and self.given_back < self.max_submissions:
            self.submissions -= 1  # kgym's failure, not a submission: given back (module docstring)
            self.given_back += 1
        left = self.max_submissions - self.submissions
        return ToolResult(f"evaluation_id: {eid}\nstatus: {status_text(verdict)}\n"
                          f"submissions left: {left} of {self.max_submissions}", evaluation=ev)

    def inspect_evaluation(self, evaluation_id: str) -> ToolResult:
        ev = self.find(evaluation_id)
        if ev is None:
            return ToolResult("error: " + self._unknown(evaluation_id), error=True)
        text = details_text(ev.verdict, ev.evaluation_id)
        return ToolResult(trim_to_budget(text, self.inspect_token_budget, self.count_tokens))

    def finalize(self, evaluation_id: str) -> ToolResult:
        if not self.evaluations:
            self.done = True
            return ToolResult("finalized without a submission: reward 0", done=True)
        ev = self.find(evaluation_id)
        if ev is None:
            return ToolResult("error: " + self._unknown(evaluation_id), error=True)
        if ev.verdict.error is not None:
            return ToolResult(f"error: evaluation {ev.evaluation_id} failed inside kgym and has no verdict to "
                              f"score; submit the code again to retry it, or finalize another evaluation", error=True)
        self.done = True
        self.finalized = ev
        return ToolResult(f"finalized {ev.evaluation_id}: reward {self.episode_reward(ev):.4f}", done=True)
