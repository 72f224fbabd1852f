#!/usr/bin/env python3
"""Write a random-weight Llama-architecture GGUF model, with a real SentencePiece tokenizer.

The GPU end-to-end check (scripts/gpu-llamacpp-e2e) needs a model on a machine that can
download nothing. Serving speed depends on the architecture and sizes, not on what the
weights say, so this script makes one from nothing:

1. trains a SentencePiece (BPE-free "unigram") tokenizer of --vocab pieces on generated
   text (seeded, so the vocabulary is the same on every machine);
2. writes a GGUF file directly with llama.cpp's own `gguf` Python package (from the
   llama.cpp source tree given by --llama-src): architecture `llama`, f16 weights drawn
   from N(0, 0.02²), norms at 1, the tokenizer as a `llama` (SentencePiece) vocabulary with
   byte fallback, BOS added, so `/tokenize` counts tokens exactly.

Needs numpy and sentencepiece (both on the H200 lease's python3), and no torch.

    python3 scripts/gpu/make-random-llama.py --llama-src SRC --out model.gguf
    # the defaults are a ~1.0B model: hidden 2048, 22 layers, 32 heads, 4 KV heads,
    # feed-forward 5632, vocab 8000, context 131072
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def corpus(path: Path, lines: int, seed: int) -> None:
    """Generated text: words from syllables with a Zipf-like word frequency."""
    rng = np.random.default_rng(seed)
    onsets = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t",
              "v", "w", "z", "ch", "sh", "th", "st", "tr", "pl", "br", "gr", "cl"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "ee"]
    codas = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "rk"]
    words = []
    for _ in range(30000):
        n = 1 + rng.poisson(1.2)
        words.append("".join(
            onsets[rng.integers(len(onsets))] + vowels[rng.integers(len(vowels))]
            + codas[rng.integers(len(codas))] for _ in range(n)))
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    weights /= weights.sum()
    punct = [".", ",", "?", "!", ";", ":"]
    lengths = rng.integers(6, 24, size=lines)
    idx = rng.choice(len(words), size=int(lengths.sum()), p=weights)
    numbers = rng.integers(0, 10000, size=lines)
    with_number = rng.random(lines) < 0.3
    ends = rng.integers(len(punct), size=lines)
    with path.open("w") as f:
        at = 0
        for i, k in enumerate(lengths):
            sent = " ".join(words[j] for j in idx[at:at + k])
            at += k
            if with_number[i]:
                sent += f" {numbers[i]}"
            f.write(sent.capitalize() + punct[ends[i]] + "\n")


def train_tokenizer(workdir: Path, vocab: int, seed: int):
    import sentencepiece as spm

    text = workdir / "corpus.txt"
    corpus(text, 60000, seed)
    prefix = workdir / "tok"
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(prefix),
        vocab_size=vocab,
        model_type="unigram",
        byte_fallback=True,
        character_coverage=1.0,
        num_threads=os.cpu_count() or 1,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_file=str(prefix) + ".model")


def vocab_arrays(sp, gguf):
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.id_to_piece(i).encode("utf-8"))
        scores.append(sp.get_score(i))
        if sp.is_unknown(i):
            t = gguf.TokenType.UNKNOWN
        elif sp.is_control(i):
            t = gguf.TokenType.CONTROL
        elif sp.is_unused(i):
            t = gguf.TokenType.UNUSED
        elif sp.is_byte(i):
            t = gguf.TokenType.BYTE
        else:
            t = gguf.TokenType.NORMAL
        types.append(int(t))
    return tokens, scores, types


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-src", required=True, type=Path,
                    help="llama.cpp source tree (holds gguf-py/)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=22)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=5632)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--ctx", type=int, default=131072)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.hidden % args.heads or args.heads % args.kv_heads:
        ap.error("--hidden must divide by --heads, and --heads by --kv-heads")

    sys.path.insert(0, str(args.llama_src / "gguf-py"))
    import gguf

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        sp = train_tokenizer(Path(tmp), args.vocab, args.seed)
    t_tok = time.monotonic() - t0

    h, L, nh, nkv, ff, V = args.hidden, args.layers, args.heads, args.kv_heads, args.ff, args.vocab
    head_dim = h // nh
    kv = nkv * head_dim
    w = gguf.GGUFWriter(str(args.out), "llama")
    w.add_name(f"servebench random llama h{h} l{L}")
    w.add_context_length(args.ctx)
    w.add_embedding_length(h)
    w.add_block_count(L)
    w.add_feed_forward_length(ff)
    w.add_head_count(nh)
    w.add_head_count_kv(nkv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(V)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    tokens, scores, types = vocab_arrays(sp, gguf)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_unk_token_id(sp.unk_id())
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    rng = np.random.default_rng(args.seed)

    def weight(rows: int, cols: int) -> np.ndarray:
        # numpy shape (out, in), as convert_hf_to_gguf.py passes torch's Linear weights
        a = rng.standard_normal((rows, cols), dtype=np.float32)
        a *= 0.02
        return a.astype(np.float16)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    params = 0
    t1 = time.monotonic()
    tensors = [("token_embd.weight", weight(V, h))]
    for i in range(L):
        b = f"blk.{i}."
        tensors += [
            (b + "attn_norm.weight", ones(h)),
            (b + "attn_q.weight", weight(h, h)),
            (b + "attn_k.weight", weight(kv, h)),
            (b + "attn_v.weight", weight(kv, h)),
            (b + "attn_output.weight", weight(h, h)),
            (b + "ffn_norm.weight", ones(h)),
            (b + "ffn_gate.weight", weight(ff, h)),
            (b + "ffn_up.weight", weight(ff, h)),
            (b + "ffn_down.weight", weight(h, ff)),
        ]
    tensors += [("output_norm.weight", ones(h)), ("output.weight", weight(V, h))]
    for name, a in tensors:
        params += a.size
        w.add_tensor(name, a)
    t_gen = time.monotonic() - t1

    t2 = time.monotonic()
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    t_write = time.monotonic() - t2

    print(json.dumps({
        "model": str(args.out),
        "parameters": params,
        "bytes": args.out.stat().st_size,
        "hidden": h, "layers": L, "heads": nh, "kv_heads": nkv, "ff": ff, "vocab": V,
        "context": args.ctx,
        "seconds": {"tokenizer": round(t_tok, 1), "weights": round(t_gen, 1),
                    "write": round(t_write, 1)},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
