#!/usr/bin/env python3
"""Fails when a library reads the environment outside the places that hold its
configuration (ARCHITECTURE.md): the engines' tuning (`chatty_algo::tuning`), the
memory limit, the dataset finder of the tests, the CUDA layer's caches, the
calibration's cache, and what `mpirun` says (`chatty::process`). The binary (`cli`)
may read what it likes.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "crates/algo/src/tuning.rs",
    "crates/graph/src/error.rs",
    "crates/graph/src/datasets.rs",
    "crates/comm/src/cuda/mod.rs",
    "crates/comm/src/cuda/nvrtc.rs",
    "crates/comm/src/calibrate.rs",
    "crates/chatty/src/process.rs",
}
READ = re.compile(r"\benv::var(_os)?\s*\(|\benv::vars(_os)?\s*\(")


def main():
    found = []
    for path in sorted(list(ROOT.glob("crates/*/src/**/*.rs")) + list(ROOT.glob("python/src/**/*.rs"))):
        rel = str(path.relative_to(ROOT))
        if rel.startswith("crates/cli/") or rel in ALLOWED:
            continue
        for number, line in enumerate(path.read_text().split("\n"), 1):
            if READ.search(line.split("//")[0]):
                found.append(f"{rel}:{number}: reads the environment: {line.strip()}")
    for f in found:
        print(f)
    if found:
        sys.exit(1)
    print("the environment is read only where the configuration lives")


if __name__ == "__main__":
    main()
