"""How the learner runs its causal LM so that it is the sampler's policy and its memory follows the budget.

- `disable_dropout(model)`: every dropout off, kept off in train mode: each LoRA layer's
  `lora_dropout[adapter]` becomes `nn.Identity` (what peft builds for dropout 0) and the adapter
  configs say 0, any other `nn.Dropout` gets p = 0, and attention modules' `attention_dropout` is 0.
  jobs.sft trains with LoRA dropout 0.05 and the RL learner loads that adapter (twice: trainable and
  reference); the sampler (vLLM) never drops anything, so with dropout on, the learner's log-probs
  were a different, noisy policy: KL 0.029/token at RL step 0 instead of 0, drift 0.127 on an
  on-policy batch (issue 28). The model stays in train mode (gradient checkpointing needs it).
- `completion_logprobs(model, batch, temperature, chunk)`: the completion tokens' log-probs and
  entropies (B, C) at the sampler's temperature, log softmax(logits / T) in float32 as vLLM's
  `processed_logprobs` are. With `chunk` > 0 the decoder runs to its last hidden states and the head
  (`lm_head`) runs on `chunk` completion rows at a time (`kgym.rl.chunked`), over the real
  completion tokens only (padding is skipped; its positions read 0): no (C x V) tensor exists.
  `chunk = 0` is the model's own forward (`logits_to_keep`), full-vocabulary logits for every
  completion position: the fallback, and the reference the chunked path is tested against.
  The chunked path assumes logits = lm_head(last hidden state), true of Qwen2/Qwen3, Llama and
  Mistral; models whose forward post-processes logits (Gemma's soft-capping, Cohere's and Granite's
  scales) are refused (`check_chunkable`) rather than scored as another policy.

Does not cover: loading the model (`learner_core.load_base_model`), the loss, packing.
"""

from __future__ import annotations

import torch
from torch import nn

from kgym.rl import PaddedBatch, chunked_logprobs, token_logprobs_and_entropy

# config attributes whose non-neutral value means the model's forward changes logits after lm_head
_LOGIT_POSTPROCESSING = {"final_logit_softcapping": None, "logit_scale": 1.0, "logits_scaling": 1.0}


def disable_dropout(model: nn.Module) -> list[str]:
    """Turn every dropout of `model` off (see the module docstring); returns what was changed."""
    changed: list[str] = []
    for name, module in model.named_modules():
        lora = getattr(module, "lora_dropout", None)
        if isinstance(lora, nn.ModuleDict):
            for adapter, drop in list(lora.items()):
                if not isinstance(drop, nn.Identity):
                    lora[adapter] = nn.Identity()
                    changed.append(f"{name}.lora_dropout.{adapter}")
        if isinstance(module, nn.Dropout) and module.p != 0.0:
            module.p = 0.0
            changed.append(name)
        rate = getattr(module, "attention_dropout", None)
        if isinstance(rate, float) and rate != 0.0:
            module.attention_dropout = 0.0
            changed.append(f"{name}.attention_dropout")
    for cfg in (getattr(model, "peft_config", None) or {}).values():
        if getattr(cfg, "lora_dropout", 0.0):
            cfg.lora_dropout = 0.0  # the saved RL adapter says what was trained
    return changed


def _hf_model(model: nn.Module) -> nn.Module:
    """The transformers model under a peft wrapper (LoRA layers are injected in place, so calling
    its decoder and head runs the active adapter)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def check_chunkable(model: nn.Module) -> None:
    cfg = getattr(_hf_model(model), "config", None)
    for attr, neutral in _LOGIT_POSTPROCESSING.items():
        value = getattr(cfg, attr, neutral)
        if value != neutral:
            raise ValueError(f"the model's forward post-processes logits ({attr}={value!r}); chunked log-probs "
                             f"would score another policy: set learner logits_chunk = 0")


def completion_logprobs(model: nn.Module, pb: PaddedBatch, temperature: float, chunk: int,
                        entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, C) float32 log-probs and entropies of `pb`'s completion tokens (position P-1+t predicts
    completion token t)."""
    p, c = pb.prompt_width, pb.completion_width
    if chunk <= 0:
        out = model(input_ids=pb.input_ids, attention_mask=pb.attention_mask, position_ids=pb.position_ids,
                    logits_to_keep=c + 1, use_cache=False)
        return token_logprobs_and_entropy(out.logits[:, :-1, :], pb.completion_ids, temperature, entropy_grad)
    hf = _hf_model(model)
    hidden = hf.get_decoder()(input_ids=pb.input_ids, attention_mask=pb.attention_mask,
                              position_ids=pb.position_ids, use_cache=False).last_hidden_state
    hidden = hidden[:, p - 1:p - 1 + c]  # (B, C, H)
    valid = pb.attention_mask[:, p:p + c].bool()  # real completion tokens, not padding
    where = torch.nonzero(valid, as_tuple=True)
    lp, ent = chunked_logprobs(hidden[where], hf.get_output_embeddings(), pb.completion_ids[where], temperature,
                               chunk, entropy_grad)
    zeros = torch.zeros(valid.shape, dtype=torch.float32, device=lp.device)
    return zeros.index_put(where, lp), zeros.index_put(where, ent)
