"""A random-weight model of a real shape, with a full-vocabulary byte-level tokenizer and a chat
template, written as a Hugging Face model directory: what the RL job and vLLM load where no weights
can be downloaded (the GPU machine, CI).

    python benchmarks/random_model.py OUT --shape qwen2-1.5b [--chat-template qwen3_8.jinja] [--device cuda]

Shapes are Qwen2's published configurations (layers, widths, heads, vocabulary 151,936), so memory,
speed and the logits' size are the real model's; the weights are N(0, 0.02) (Hugging Face's init).
The tokenizer covers every id the model can sample: 256 byte symbols, then merges of symbol pairs and
triples until the vocabulary is full, plus Qwen's special tokens (`<|endoftext|>`, `<|im_start|>`,
`<|im_end|>`); any sampled id decodes. `--chat-template` takes a Jinja file (TRL ships the Qwen3
family's as `trl/chat_templates/qwen3_8.jinja`); `trl:NAME` reads it from an installed TRL. Without
one, a plain ChatML template is written. Does not train anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
import time
from pathlib import Path

SHAPES: dict[str, dict[str, object]] = {
    "qwen2-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                       num_key_value_heads=2, tie_word_embeddings=True),
    "qwen2-1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                       num_key_value_heads=2, tie_word_embeddings=True),
    "qwen2-7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                     num_key_value_heads=4, tie_word_embeddings=False),
}
VOCAB = 151_936
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def byte_level_tokenizer(vocab_size: int = VOCAB):
    """A BPE whose vocabulary is exactly `vocab_size`: bytes, then pair and triple merges."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    symbols = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {s: i for i, s in enumerate(symbols)}
    merges: list[tuple[str, str]] = []
    room = vocab_size - len(SPECIALS)
    pairs = ((a, b) for a, b in itertools.product(symbols, repeat=2))
    triples = ((a + b, c) for a, b, c in itertools.product(symbols, repeat=3))
    for left, right in itertools.chain(pairs, triples):
        if len(vocab) >= room:
            break
        vocab[left + right] = len(vocab)
        merges.append((left, right))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIALS))
    assert tok.get_vocab_size(with_added_tokens=True) == vocab_size
    return tok


def chat_template(spec: str | None) -> str:
    if spec is None:
        return CHATML
    if spec.startswith("trl:"):
        found = importlib.util.find_spec("trl")
        if found is None or found.origin is None:
            raise SystemExit(f"--chat-template {spec}: TRL is not installed; give the template's file instead")
        spec = str(Path(found.origin).parent / "chat_templates" / f"{spec[4:]}.jinja")
    path = Path(spec)
    if not path.is_file():
        raise SystemExit(f"--chat-template {spec}: no such file")
    return path.read_text()


def build(out: Path, shape: str, template: str | None, device: str, seed: int = 0) -> Path:
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = PreTrainedTokenizerFast(tokenizer_object=byte_level_tokenizer(), eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", bos_token=None)
    tok.chat_template = chat_template(template)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    config = Qwen2Config(vocab_size=VOCAB, max_position_embeddings=32768, rms_norm_eps=1e-6, bos_token_id=eos,
                         eos_token_id=eos, pad_token_id=tok.pad_token_id, use_sliding_window=False,
                         **SHAPES[shape])
    torch.manual_seed(seed)
    with torch.device(device):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.config.dtype = torch.bfloat16
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="random_model.py", description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--shape", choices=sorted(SHAPES), default="qwen2-1.5b")
    p.add_argument("--chat-template", help="a Jinja file, or trl:NAME (e.g. trl:qwen3_8); default ChatML")
    p.add_argument("--device", default="cpu", help="where the weights are drawn (cuda is much faster for 7B)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    build(args.out, args.shape, args.chat_template, args.device)
    print(f"random_model: {args.shape} in {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
