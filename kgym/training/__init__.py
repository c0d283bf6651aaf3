"""kgym.training: what trains a policy, without Ray: the learner (a peft/QLoRA causal LM, one optimizer
step at a time: `learner_core`, its settings: `learner_config`, and how it runs the model:
`learner_model`), one GPU's memory for the placement (`device_memory`), and the RL loop's rules on
plain values (`step_rules`: scoring groups, resampling, the off-policy bound, the learner batch, the
held-out set and its bootstrap, the records' rows). `ray_cluster.learner` wraps the learner in an
actor; `jobs/rl.py` drives the loop. The math itself is `kgym.rl`'s.

Importing this package imports nothing; `learner_core` imports torch, and transformers, peft and
bitsandbytes only when a Learner is built.
"""
