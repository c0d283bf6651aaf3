"""kgym.rl: the RL math of the learner, on plain tensors (imports torch only: no Ray, vLLM, transformers).

    batch       Sample / Turn / TrainBatch: the learner's input; how a multi-turn episode flattens
    packing     micro-batches by token budget; padded tensors of one micro-batch
    advantages  group-relative (R - mean) / std, zero for a degenerate group
    tokens      log-probs and entropies from logits; masked sums (token-level normalisation)
    chunked     the same from hidden states, a chunk of rows at a time (no tokens x vocab tensor)
    correction  the sampler/learner gap: its statistics, and the corrections none | recompute | tis
    kl          the k3 estimator of KL to the reference
    loss_io     LossInputs -> LossOutput, the normalisations, KL and entropy terms every loss shares
    cispo       the CISPO loss (bound modes 'trl' and 'verl')
    clipped     the PPO-clip family: GRPO, DAPO, Dr. GRPO
    losses      the registry: a loss chosen by name (`make_loss_config`, `policy_loss`)
    entropy     the adaptive entropy-bonus controller
    repo        REPO-style advantage shaping by token log-probability (arXiv 2603.11682)
"""

from kgym.rl.advantages import AdvantageConfig, batch_advantages, group_advantages
from kgym.rl.batch import Sample, TrainBatch, Turn, flatten_turns
from kgym.rl.chunked import chunked_logprobs
from kgym.rl.cispo import BoundMode, CispoConfig, cispo_loss
from kgym.rl.clipped import ClipLossConfig, ClipVariant, clipped_loss
from kgym.rl.correction import (
    Behaviour,
    Correction,
    CorrectionConfig,
    GapInputs,
    GapStats,
    behaviour,
    sampler_gap,
    tis_weights,
)
from kgym.rl.entropy import EntropyBonusConfig, EntropyController
from kgym.rl.kl import k3_kl
from kgym.rl.loss_io import LossInputs, LossOutput, Normalise
from kgym.rl.losses import LossConfig, LossSpec, loss_names, make_loss_config, policy_loss, register_loss
from kgym.rl.packing import PaddedBatch, collate, plan_micro_batches
from kgym.rl.repo import LogProbShapingConfig, shape_advantages
from kgym.rl.tokens import masked_mean, masked_sum, token_entropy, token_logprobs, token_logprobs_and_entropy

__all__ = [
    "AdvantageConfig", "batch_advantages", "group_advantages", "Sample", "TrainBatch", "Turn", "flatten_turns",
    "chunked_logprobs", "Behaviour", "behaviour", "Correction", "CorrectionConfig", "GapInputs", "GapStats",
    "sampler_gap", "tis_weights",
    "BoundMode", "CispoConfig", "cispo_loss", "ClipLossConfig", "ClipVariant", "clipped_loss", "LossInputs",
    "LossOutput", "Normalise", "LossConfig", "LossSpec", "loss_names", "make_loss_config", "policy_loss",
    "register_loss", "EntropyBonusConfig", "EntropyController",
    "k3_kl", "PaddedBatch", "collate", "plan_micro_batches", "LogProbShapingConfig", "shape_advantages",
    "masked_mean", "masked_sum", "token_entropy", "token_logprobs", "token_logprobs_and_entropy",
]
