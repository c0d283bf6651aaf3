"""The worked example every single-turn prompt shows: a reference and its Triton answer.
(An operation no family registers, so the example never gives a task's answer away.)"""
