#!/usr/bin/env python3
"""Make a weightless Qwen3-MoE model folder for vLLM and SGLang's `--load-format dummy`.

The GPU machine can download nothing, and both engines started with `--load-format dummy`
need only a config.json and a tokenizer: they fill the weights with random values
themselves. Serving speed depends on the shapes, not on what the weights say.

- config.json: Qwen3-30B-A3B's layer shape (hidden 2048, 32 query / 4 KV heads of 128, 128
  routed experts of width 768, 8 per token) with `--layers` decoder layers. That shape is the
  one vLLM ships a tuned Triton MoE table for on the H200
  (`E=128,N=768,device_name=NVIDIA_H200.json`), so its Triton arm runs as tuned.
- a WordLevel tokenizer on generated words (each token decodes to a whole word), with a chat
  template, whose vocabulary is exactly config.json's `vocab_size`: a random model may
  sample any id below it, and each must decode.

    python3 scripts/gpu/make-dummy-qwen3-moe.py DIR [--layers 8]
"""

import argparse
import itertools
import json
import os

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

SYLLABLES = ["ka", "lo", "mi", "ner", "ta", "sul", "ve", "ro", "qui", "ban",
             "de", "fu", "zo", "pri", "mal", "ten", "gor", "li", "sa", "who"]
SPECIALS = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VOCAB = 8192
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def words():
    """Every word of one to three syllables, shortest first: enough for VOCAB."""
    for n in (1, 2, 3):
        for parts in itertools.product(SYLLABLES, repeat=n):
            yield "".join(parts)


def tokenizer():
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    for w in words():
        if len(vocab) == VOCAB:
            break
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                 unk_token="<unk>", pad_token="<|endoftext|>")
    hf.chat_template = CHAT_TEMPLATE
    return hf


def config(layers, vocab, eos):
    return {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
        "vocab_size": vocab, "hidden_size": 2048, "intermediate_size": 6144,
        "moe_intermediate_size": 768, "num_hidden_layers": layers,
        "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
        "mlp_only_layers": [], "norm_topk_prob": True, "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0, "max_position_embeddings": 32768, "hidden_act": "silu",
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "attention_bias": False,
        "attention_dropout": 0.0, "use_sliding_window": False, "sliding_window": None,
        "max_window_layers": layers, "output_router_logits": False,
        "router_aux_loss_coef": 0.001, "initializer_range": 0.02, "use_cache": True,
        "bos_token_id": eos, "eos_token_id": eos,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--layers", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    hf = tokenizer()
    assert len(hf) == VOCAB, f"the tokenizer holds {len(hf)} tokens, not {VOCAB}"
    hf.save_pretrained(a.dir)
    cfg = config(a.layers, len(hf), hf.eos_token_id)
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(a.dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": hf.eos_token_id}, f)
    print(f"{a.dir}: Qwen3-MoE config, {a.layers} layers, vocabulary {len(hf)}")


if __name__ == "__main__":
    main()
