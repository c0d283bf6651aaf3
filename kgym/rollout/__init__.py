"""Rollouts: the model's side of every episode.

`toolcalls.py` parses Hermes/Qwen `<tool_call>` blocks into OpenAI-form calls (torch-free);
`sampling.py` the sampling settings and their RL / evaluation defaults; `adapters.py` the LoRA
policy versions (fresh ids and paths, the staleness window); `engine.py` the vLLM engine wrapper
(imports vLLM on first use only); `batcher.py` one generation call for every waiting episode;
`driver.py` many single-turn and repair episodes interleaved over one engine; `turn_prompts.py` the
token ids of each turn's prompt; `chat_form.py` messages in the form chat templates read (tool-call
arguments as a mapping); `context_budget.py` the room a turn has under the engine's max_model_len. The
Ray actor is `ray_cluster/rollout.py`. Nothing here imports vLLM at import time, and nothing
references the loop (the RL job) that drives it.
"""
