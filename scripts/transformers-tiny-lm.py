"""Make the tiny random-weight causal LM and its whole-word tokenizer that
scripts/setup-transformers serves with `transformers serve` on a CPU. No hub downloads.

    python transformers-tiny-lm.py OUT_DIR WORDS_FILE

OUT_DIR receives a model folder `save_pretrained` wrote (config.json, model.safetensors,
generation_config.json, tokenizer.json, tokenizer_config.json with a chat template).

The tokenizer is a WordLevel model trained here on a generated corpus (the words of
WORDS_FILE, one a line: servebench's random-prompt vocabulary, plus made-up syllable words),
split at whitespace. Every token is one whole word, so every generated token decodes to text
on its own: no stream is left without content by a detokenizer holding back bytes.

The model is a Llama of 2 layers, hidden size 128, float32, seeded. Its special tokens
(<unk>, <|endoftext|>, <|im_start|>, <|im_end|>) are never generated greedily: hidden channel 0
of the residual stream is held at a constant 1 (the embeddings set it, no layer writes to it),
so after the final norm it is positive at every position, and the lm_head rows of the special
tokens read only that channel, with weight -1: their logits are always negative, while the
best of ~3800 random word logits is positive (9 logits apart in the check below). So outputs
run to max_tokens (transformers serve refuses `ignore_eos` with 422) and every output token
is a word that shows up as content in the stream. The same inputs make byte-identical files.
"""

import json
import os
import random
import sys
import time

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import AutoModelForCausalLM, LlamaConfig, PreTrainedTokenizerFast
from transformers.utils import logging as hf_logging

SPECIALS = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SEED = 20261201


def main() -> None:
    out, words_file = sys.argv[1], sys.argv[2]
    hf_logging.disable_progress_bar()
    t0 = time.time()
    torch.manual_seed(SEED)
    rng = random.Random(SEED)

    given = [w.strip() for w in open(words_file, encoding="utf-8") if w.strip()]
    if len(given) < 100 or not all(w.isalpha() and w.isascii() for w in given):
        sys.exit(f"{words_file}: expected at least 100 ASCII words, one a line")
    syllables = "ka lo mi ner ta sul ve ro qui ban de fu zo pri mal ten gor li sa wen".split()
    made = set()
    while len(made) < 3500:
        made.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    vocab_words = given + sorted(made - set(given))
    # Each word appears in the corpus, so the trainer keeps every one of them; the roles of the
    # chat template ("user", "assistant", "system") are words of the vocabulary too.
    vocab_words += [w for w in ("user", "assistant", "system") if w not in vocab_words]
    corpus = [" ".join(vocab_words[i : i + 50]) for i in range(0, len(vocab_words), 50)]
    corpus += [" ".join(rng.choice(vocab_words) for _ in range(40)) for _ in range(2000)]

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # No decoder: tokens are joined with single spaces when decoded (the tokenizers default),
    # so each streamed token adds " word".
    trainer = trainers.WordLevelTrainer(vocab_size=len(vocab_words) + len(SPECIALS), min_frequency=1, special_tokens=SPECIALS)
    tok.train_from_iterator(corpus, trainer)
    vocab = tok.get_vocab()
    missing = [w for w in vocab_words if w not in vocab]
    if missing:
        sys.exit(f"the trained vocabulary lacks {len(missing)} words, e.g. {missing[:5]}")

    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    hf.chat_template = CHAT_TEMPLATE
    special_ids = [hf.convert_tokens_to_ids(t) for t in SPECIALS]
    eos = hf.convert_tokens_to_ids("<|endoftext|>")

    cfg = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=128,
        intermediate_size=384,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=eos,
        architectures=["LlamaForCausalLM"],
    )
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    with torch.no_grad():
        # Larger than the default 0.02 init, so that the random logits are not all nearly equal.
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.2)
        emb = model.model.embed_tokens.weight
        emb[:, 0] = 1.0  # channel 0 of the residual stream: 1 at every position
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0, :] = 0.0  # no layer writes to channel 0
            layer.mlp.down_proj.weight[0, :] = 0.0
        head = model.lm_head.weight
        head[:, 0] = 0.0
        head[special_ids, :] = 0.0
        head[special_ids, 0] = -1.0
    model.generation_config.do_sample = False
    model.generation_config.max_new_tokens = None
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = eos

    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    hf.save_pretrained(out)

    # Check what the server will see: the saved folder reloads, the chat template renders, every
    # generated token is a word that decodes to text on its own, and no special token comes out.
    m = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    t = PreTrainedTokenizerFast.from_pretrained(out)
    ids = t.apply_chat_template([{"role": "user", "content": " ".join(given[:20])}], add_generation_prompt=True, return_dict=True, return_tensors="pt")
    with torch.no_grad():
        logits = m(**ids).logits[0, -1]
    words = [i for i in range(len(vocab)) if i not in special_ids]
    margin = (logits[words].max() - logits[special_ids].max()).item()
    gen = m.generate(**ids, max_new_tokens=64, do_sample=False, eos_token_id=None)[0, ids["input_ids"].shape[-1] :].tolist()
    bad = [i for i in gen if i in special_ids]
    if bad or margin < 5:
        sys.exit(f"special tokens can be generated (margin {margin:.1f}, generated {bad})")
    texts = [t.decode([i]) for i in gen]
    if any(not s.isalpha() for s in texts):
        sys.exit(f"a generated token does not decode to a word on its own: {texts}")
    distinct = len(set(gen))
    if distinct < 8:
        sys.exit(f"the random model repeats itself: {distinct} distinct tokens of 64")
    template_tokens = len(ids["input_ids"][0]) - 20
    n = sum(p.numel() for p in m.parameters())
    info = {
        "parameters": n,
        "vocab_size": len(vocab),
        "special_token_margin_logits": round(margin, 2),
        "chat_template_tokens": template_tokens,
        "distinct_tokens_in_64": distinct,
        "seed": SEED,
    }
    with open(os.path.join(out, "servebench-tiny-lm.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(f"transformers-tiny-lm: {n / 1e6:.2f} M parameters, vocabulary {len(vocab)}, "
          f"chat template adds {template_tokens} tokens, made in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
