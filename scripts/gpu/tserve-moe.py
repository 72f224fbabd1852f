#!/usr/bin/env python3
"""Start `transformers serve --continuous-batching` on the random MoE with one experts backend.

    python3 scripts/gpu/tserve-moe.py ROOT IMPL PORT [serve options...]

ROOT is what scripts/gpu/make-random-moe.py made. The server always serves the one path
ROOT/moe (a symbolic link set here to ROOT/moe-IMPL): transformers serve answers 400 to a
request whose `model` is not the model it was started with, so both arms of an A/B must serve
the same path.

What the spec verifies is not this script's word: once the server process has loaded the
model, it prints what the loaded model itself says — `config._experts_implementation` of the
model object transformers serve will run, and the function its MoE layers dispatch to — as

    servebench-verify: experts_implementation=grouped_mm forward=grouped_mm_experts_forward

(transformers 5.17: integrations/moe.py, `ALL_EXPERTS_FUNCTIONS.get_interface`; the eager
backend keeps the model's own forward). The hook wraps ModelManager._load_model
(cli/serving/model_manager.py), which serve calls once at start for the model it is given.

It also installs servebench's profiler routes (`POST /start_profile`, `POST /stop_profile`:
scripts/tserve_profiler.py), for specs that take kernel evidence (docs/kernels.md).
"""

import os
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    root, impl, port, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    folder = os.path.join(root, f"moe-{impl}")
    if not os.path.isdir(folder):
        sys.exit(f"tserve-moe: no model folder {folder} (make it with scripts/gpu/make-random-moe.py)")
    link = os.path.join(root, "moe")
    tmp = link + ".new"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(folder, tmp)
    os.replace(tmp, link)

    from transformers.cli.serving import model_manager
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS

    load = model_manager.ModelManager._load_model

    def load_and_say(self, *args, **kwargs):
        model = load(self, *args, **kwargs)
        said = getattr(model.config, "_experts_implementation", None)
        forward = "model's own"
        try:
            forward = ALL_EXPERTS_FUNCTIONS.get_interface(said, None)
            forward = getattr(forward, "__name__", "model's own") if forward else "model's own"
        except KeyError as e:
            forward = f"unknown ({e})"
        print(f"servebench-verify: experts_implementation={said} forward={forward}", flush=True)
        return model

    model_manager.ModelManager._load_model = load_and_say
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import tserve_profiler

    tserve_profiler.install()
    from transformers.cli.transformers import main as cli

    sys.argv = ["transformers", "serve", link, "--continuous-batching", "--host", "127.0.0.1",
                "--port", port, "--log-level", "info", *rest]
    cli()


if __name__ == "__main__":
    main()
