#!/usr/bin/env python3
"""Fails when a function outside tests and generated code is longer than 80 lines
(ARCHITECTURE.md), counting from its signature to its closing brace.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80
SIGNATURE = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?(async\s+)?fn\s+(\w+)")


def functions(path):
    """(name, first line, lines) of every function before the file's test module."""
    lines = path.read_text().split("\n")
    end = next((i for i, l in enumerate(lines) if l.strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].startswith("mod ")), len(lines))
    i = 0
    while i < end:
        m = SIGNATURE.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        j = i
        while j < end and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= end or lines[j].rstrip().endswith(";"):
            i = j + 1
            continue
        k = j + 1
        while k < end and not (lines[k].startswith(" " * indent + "}") and len(lines[k]) - len(lines[k].lstrip()) == indent):
            k += 1
        yield m.group(7), i + 1, k - i + 1
        i += 1


def main():
    failed = []
    for path in sorted(list(ROOT.glob("crates/*/src/**/*.rs")) + list(ROOT.glob("python/src/**/*.rs"))):
        rel = str(path.relative_to(ROOT))
        for name, line, length in functions(path):
            if length > LIMIT:
                failed.append(f"{rel}:{line}: `{name}` is {length} lines (at most {LIMIT})")
    for f in failed:
        print(f)
    if failed:
        sys.exit(1)
    print(f"no function over {LIMIT} lines")


if __name__ == "__main__":
    main()
