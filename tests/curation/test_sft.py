"""jobs.sft on the tiny local model (Qwen2Config vocab ~1K, hidden 128, 2 layers, random weights; no
download): a few LoRA steps on CPU on a curated-format Parquet, an adapter directory that peft loads
back with trained (non-zero) LoRA B matrices; the same with the NF4 (QLoRA) base. That vLLM's CPU
build serves the adapter is test_sft_adapter_vllm.py's."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from jobs.sft import SFTJobConfig, run_sft  # noqa: E402
from kgym.curation.dataset import DatasetRow, write_dataset  # noqa: E402
from kgym.curation.messages import chat  # noqa: E402


def _dataset(path):
    rows = [DatasetRow(messages=chat("You write Triton kernels.", f"Write kernel number {i}.",
                                     f"@triton.jit\ndef k{i}(x_ptr):\n    pass\n"),
                       source="kernelbook", family="f", task_id="t", evaluation_id=f"e{i}", answer_mode="triton")
            for i in range(4)]
    return write_dataset(rows, path)


def _lora_b_norm(model) -> float:
    return sum(float(p.abs().sum()) for n, p in model.named_parameters() if "lora_B" in n)


@pytest.mark.parametrize("qlora", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_sft_writes_an_adapter_peft_loads(tmp_path, tiny_dir, qlora):
    if qlora:
        pytest.importorskip("bitsandbytes")
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    config = SFTJobConfig(dataset=str(_dataset(tmp_path / "d.parquet")), model=str(tiny_dir), out=str(tmp_path / "sft"),
                          max_steps=3, max_length=256, cpu=True, logging_steps=1, qlora=qlora, learning_rate=1e-2)
    result = run_sft(config, log=lambda s: None)
    assert result.steps == 3 and result.rows == 4 and result.train_loss > 0
    adapter = tmp_path / "sft" / "adapter"
    assert (adapter / "adapter_model.safetensors").is_file()
    cfg = json.loads((adapter / "adapter_config.json").read_text())
    assert cfg["r"] == 8 and set(cfg["target_modules"]) >= {"q_proj", "v_proj", "down_proj"}
    assert not (tmp_path / "sft" / ".adapter.tmp").exists()
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_dir), adapter)
    assert _lora_b_norm(model) > 0  # B starts at zero: non-zero means the steps trained it
