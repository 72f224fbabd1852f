#!/usr/bin/env python3
"""Write specs/data/arithmetic-answers.jsonl: a small generated arithmetic set with reference
answers, for `spec.equivalence.reference` (docs/equivalence.md, "Task accuracy").

    scripts/make-arithmetic-answers.py [--count 40] [--seed 1] [--out PATH]

Each line is {"prompt": "What is A + B? Answer with the number only.", "answer": "C"}, the
operation one of +, - and *, the operands drawn by a fixed 64-bit LCG (Knuth's MMIX
constants) from --seed, so the file is the same on every machine and Python version; the
committed file is this script's output with the defaults (a test checks it). Nothing is
downloaded. Python 3, standard library only.
"""

import argparse
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_OUT = os.path.join(ROOT, "specs", "data", "arithmetic-answers.jsonl")
MASK = (1 << 64) - 1


class Lcg:
    def __init__(self, seed):
        self.state = seed & MASK

    def below(self, n):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & MASK
        return (self.state >> 33) % n


def lines(count, seed):
    rng = Lcg(seed)
    for _ in range(count):
        op = "+-*"[rng.below(3)]
        if op == "*":
            a, b = 2 + rng.below(18), 2 + rng.below(18)
            c = a * b
        else:
            a, b = 10 + rng.below(90), 10 + rng.below(90)
            if op == "-" and b > a:
                a, b = b, a
            c = a + b if op == "+" else a - b
        yield {"prompt": f"What is {a} {op} {b}? Answer with the number only.", "answer": str(c)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=DEFAULT_OUT, help="'-' for stdout")
    args = ap.parse_args()
    if args.count < 1:
        sys.exit("--count must be at least 1")
    text = "".join(json.dumps(l) + "\n" for l in lines(args.count, args.seed))
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
