"""Make a tiny random-weight vision-language model (Llava) from the tiny LM that
scripts/transformers-tiny-lm.py made, for `transformers serve` on a CPU. No hub downloads.

    python transformers-tiny-vlm.py TINY_LM_DIR OUT_DIR

The language model is the tiny LM itself (its weights copied), with one token added:
`<image>`, which the processor repeats IMAGE_TOKENS times per image. The vision tower is a
1-layer CLIP of hidden size 32 on 32x32 images in 8x8 patches (16 patches; the CLS feature is
dropped: `vision_feature_select_strategy: default`), projected into the LM. So every image
adds exactly IMAGE_TOKENS prompt tokens whatever its size (the image processor resizes it),
and the LM keeps the tiny LM's guarantees: its special tokens, `<image>` among them, are never
generated (their lm_head rows read only residual channel 0, which no layer writes and every
text token's embedding holds at 1; the last position is always a text token of the chat
template). transformers serve takes `image_url` parts for it (cli/serving/utils.py
`get_processor_inputs_from_messages`: VLM modality, as `LlavaForConditionalGeneration` is an
image-text-to-text model) and answers `usage.prompt_tokens` with the images' tokens counted.

Writes OUT_DIR/servebench-tiny-vlm.json: the image tokens and the chat template's tokens, as
measured here through the processor, for the tests to read.
"""

import json
import os
import sys
import time

import torch
from PIL import Image
from transformers import (
    AutoModelForCausalLM,
    CLIPImageProcessor,
    CLIPVisionConfig,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
)
from transformers.utils import logging as hf_logging

SEED = 20261202
IMAGE_SIZE, PATCH = 32, 8
IMAGE_TOKENS = (IMAGE_SIZE // PATCH) ** 2
# The tiny LM's template, with image parts rendered as `<image>` where they stand.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def main() -> None:
    lm_dir, out = sys.argv[1], sys.argv[2]
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    t0 = time.time()
    torch.manual_seed(SEED)
    tok = PreTrainedTokenizerFast.from_pretrained(lm_dir)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<image>"]})
    tok.chat_template = CHAT_TEMPLATE
    image_id = tok.convert_tokens_to_ids("<image>")
    lm = AutoModelForCausalLM.from_pretrained(lm_dir, dtype=torch.float32)
    text = lm.config
    old_vocab = text.vocab_size
    text.vocab_size = len(tok)
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=IMAGE_SIZE,
        patch_size=PATCH,
        projection_dim=32,
    )
    cfg = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=image_id,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        image_seq_length=IMAGE_TOKENS,
    )
    model = LlavaForConditionalGeneration(cfg)
    with torch.no_grad():
        own = model.model.language_model.state_dict()
        for k, v in lm.model.state_dict().items():
            if k == "embed_tokens.weight":
                own[k][:old_vocab] = v
                own[k][old_vocab:] = 0.0
                own[k][old_vocab:, 0] = 1.0
            else:
                own[k].copy_(v)
        model.model.language_model.load_state_dict(own)
        head = model.lm_head.weight
        head[:old_vocab] = lm.lm_head.weight
        head[old_vocab:] = 0.0
        head[old_vocab:, 0] = -1.0  # like the tiny LM's special tokens: never generated
    model.generation_config.do_sample = False
    model.generation_config.max_new_tokens = None
    model.generation_config.eos_token_id = lm.generation_config.eos_token_id
    model.generation_config.pad_token_id = lm.generation_config.pad_token_id
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": IMAGE_SIZE},
            crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        ),
        tokenizer=tok,
        patch_size=PATCH,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)

    # Check what the server will see: the folder reloads, each image adds IMAGE_TOKENS tokens,
    # and generation never emits a special token.
    p = LlavaProcessor.from_pretrained(out)
    m = LlavaForConditionalGeneration.from_pretrained(out, dtype=torch.float32)
    img = Image.new("RGB", (16, 8), (200, 30, 90))

    def inputs(n_images):
        content = [{"type": "text", "text": "alpha beta gamma"}]
        content += [{"type": "image", "image": img}] * n_images
        return p.apply_chat_template(
            [{"role": "user", "content": content}],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
        )

    sizes = [len(inputs(n)["input_ids"][0]) for n in (0, 1, 2)]
    if sizes[1] - sizes[0] != IMAGE_TOKENS or sizes[2] - sizes[1] != IMAGE_TOKENS:
        sys.exit(f"an image does not add {IMAGE_TOKENS} tokens: prompt lengths {sizes}")
    two = inputs(2)
    gen = m.generate(**two, max_new_tokens=32, do_sample=False, eos_token_id=None)
    gen = gen[0, two["input_ids"].shape[-1] :].tolist()
    special = set(tok.all_special_ids)
    if any(i in special for i in gen):
        sys.exit(f"a special token was generated: {gen}")
    info = {
        "image_tokens": IMAGE_TOKENS,
        "chat_template_tokens": sizes[0] - 3,
        "parameters": sum(t.numel() for t in m.parameters()),
        "seed": SEED,
    }
    with open(os.path.join(out, "servebench-tiny-vlm.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(
        f"transformers-tiny-vlm: {info['parameters'] / 1e6:.2f} M parameters, {IMAGE_TOKENS} "
        f"tokens an image, chat template adds {info['chat_template_tokens']}, made in "
        f"{time.time() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
