#!/usr/bin/env python3
"""Make a random-weight Qwen3-MoE model for `transformers serve`, and a whole-word tokenizer.

The MoE end-to-end check (scripts/gpu-moe-e2e) runs on a machine that can download nothing,
so the model is made there. Serving speed depends on the shapes, not on what the weights say:

- a Qwen3-MoE config (hidden 2048, --layers layers, 16 heads, 4 KV heads, head 128, 64 routed
  experts of width 768 per layer, 8 per token), bf16, its weights initialised on the GPU from
  one torch seed, so every machine makes the same model;
- the EOS row of the output head set to zero: with random weights EOS would win the argmax
  anywhere, and transformers serve refuses `ignore_eos` (a 422 for any field outside the
  OpenAI request types), so outputs run to `max_tokens` instead;
- a WordLevel tokenizer trained on generated words: every token decodes to a whole word on
  its own. With a byte-level BPE, a token can be half of a character, and transformers serve
  then sent streams with no content chunk at all (seen on an H200 with transformers 5.17:
  5-14 of every 128 streams at concurrency 16 and 64; none with whole words);
- one folder per experts backend, `moe-<impl>`, differing only in config.json's
  `experts_implementation` (the other files are symbolic links to the first folder's);
- probe-prompts.jsonl: 16 prompts of 12 words drawn (seeded) from the tokenizer's own
  vocabulary, for the equivalence probe (`equivalence.prompts_file`). The workload's random
  dataset writes English words, every one of them `<unk>` to this vocabulary, so every such
  prompt is the same run of `<unk>` to the model and every greedy completion is the same
  (seen on an H200: one completion for all 16 prompts, both backends, every start);
- facts.json: the parameter counts (total, active per token) and the KV bytes per token, as
  counted from the loaded model, for the spec's `model_facts`.

    python3 scripts/gpu/make-random-moe.py ROOT [--layers 4] [--impls eager,grouped_mm,batched_mm] [--device cuda] [--tiny]
"""

import argparse
import json
import os
import random
import shutil
import time

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3MoeConfig

SYLLABLES = ["ka", "lo", "mi", "ner", "ta", "sul", "ve", "ro", "qui", "ban",
             "de", "fu", "zo", "pri", "mal", "ten", "gor", "li", "sa", "who"]
SPECIALS = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tokenizer(vocab):
    rng = random.Random(7)
    words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(3000)]
    corpus = [" ".join(rng.choice(words) for _ in range(40)) for _ in range(4000)]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(vocab_size=vocab, special_tokens=SPECIALS))
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                 unk_token="<unk>", pad_token="<|endoftext|>")
    hf.chat_template = CHAT_TEMPLATE
    return hf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--impls", default="eager,grouped_mm,batched_mm")
    ap.add_argument("--device", default="cuda", help="where the weights are initialised (cpu for a check without a GPU)")
    ap.add_argument("--tiny", action="store_true", help="a few-MB model of the same architecture, to check the path on a CPU")
    args = ap.parse_args()
    impls = args.impls.split(",")
    t0 = time.time()
    os.makedirs(args.root, exist_ok=True)
    tok = tokenizer(4096)
    vocab = len(tok)
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    shape = dict(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                 num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                 num_experts=64, num_experts_per_tok=8)
    if args.tiny:
        shape = dict(hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                     num_experts=8, num_experts_per_tok=2)
    cfg = Qwen3MoeConfig(
        vocab_size=vocab, num_hidden_layers=args.layers, **shape,
        decoder_sparse_step=1, mlp_only_layers=[],
        max_position_embeddings=4096, tie_word_embeddings=False, norm_topk_prob=True,
        eos_token_id=eos, pad_token_id=eos, bos_token_id=None)
    torch.manual_seed(0)
    with torch.device(args.device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    with torch.no_grad():
        model.lm_head.weight[eos].zero_()
    model.config.architectures = ["Qwen3MoeForCausalLM"]
    model.generation_config.do_sample = False
    total = sum(p.numel() for p in model.parameters())
    experts = sum(p.numel() for n, p in model.named_parameters() if ".mlp.experts." in n)
    active = total - experts + experts * cfg.num_experts_per_tok / cfg.num_experts
    first = os.path.join(args.root, f"moe-{impls[0]}")
    model.save_pretrained(first, safe_serialization=True)
    tok.save_pretrained(first)
    tok._tokenizer.save(os.path.join(args.root, "tokenizer.json"))
    for impl in impls:
        d = os.path.join(args.root, f"moe-{impl}")
        os.makedirs(d, exist_ok=True)
        if d != first:
            for f in os.listdir(first):
                if f != "config.json" and not os.path.exists(os.path.join(d, f)):
                    os.symlink(os.path.join(first, f), os.path.join(d, f))
            shutil.copy(os.path.join(first, "config.json"), os.path.join(d, "config.json"))
        path = os.path.join(d, "config.json")
        c = json.load(open(path))
        c["experts_implementation"] = impl
        json.dump(c, open(path, "w"), indent=1)
    facts = {
        "total_params": total, "active_params": active, "bytes_per_weight": 2,
        "kv_bytes_per_token": 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.head_dim * 2,
        "layers": cfg.num_hidden_layers, "vocab": vocab, "eos_token_id": eos,
    }
    json.dump(facts, open(os.path.join(args.root, "facts.json"), "w"), indent=1)
    words = sorted(w for w in tok.get_vocab() if w not in SPECIALS)
    rng = random.Random(11)
    with open(os.path.join(args.root, "probe-prompts.jsonl"), "w") as f:
        for _ in range(16):
            f.write(json.dumps({"prompt": " ".join(rng.choice(words) for _ in range(12))}) + "\n")
    print(f"made {total / 1e9:.3f} B parameters ({active / 1e9:.3f} B active per token), "
          f"{cfg.num_hidden_layers} layers, vocabulary {vocab}, in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
