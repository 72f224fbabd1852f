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

- `--fp8-block`: config.json also declares a checkpoint in block-wise FP8 (e4m3, 128×128
  blocks, activations quantized per token group at run time), the form of Qwen's own `-FP8`
  releases. SGLang's CUTLASS MoE runner accepts only block-quantized FP8 (SGLang 0.5.17,
  srt/layers/quantization/fp8.py:1066-1073), and with `--load-format dummy` the engine creates
  the FP8 weights and their scales itself (srt/model_loader/weight_utils.py:1514-1546).

    python3 scripts/gpu/make-dummy-qwen3-moe.py DIR [--layers 8] [--fp8-block]
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
MAX_POSITIONS = 32768
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
    # model_max_length as a real model's tokenizer_config.json says it: left out, transformers
    # puts 1e30 there, and SGLang 0.5.17's /tokenize returns it as `max_model_len`
    # (entrypoints/openai/serving_tokenize.py:47) and fails with 500 ("Integer exceeds 64-bit
    # range", seen on the H100).
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                 unk_token="<unk>", pad_token="<|endoftext|>",
                                 model_max_length=MAX_POSITIONS)
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
        "rope_theta": 1000000.0, "max_position_embeddings": MAX_POSITIONS, "hidden_act": "silu",
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
    ap.add_argument("--fp8-block", action="store_true",
                    help="declare block-wise FP8 weights (128x128) in config.json")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    hf = tokenizer()
    assert len(hf) == VOCAB, f"the tokenizer holds {len(hf)} tokens, not {VOCAB}"
    hf.save_pretrained(a.dir)
    cfg = config(a.layers, len(hf), hf.eos_token_id)
    if a.fp8_block:
        # What SGLang's Fp8Config.from_config reads (0.5.17, srt/layers/quantization/fp8.py:305-324).
        cfg["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3",
                                      "activation_scheme": "dynamic",
                                      "weight_block_size": [128, 128]}
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(a.dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": hf.eos_token_id}, f)
    form = ", block-wise FP8" if a.fp8_block else ""
    print(f"{a.dir}: Qwen3-MoE config, {a.layers} layers{form}, vocabulary {len(hf)}")


if __name__ == "__main__":
    main()
