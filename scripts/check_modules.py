#!/usr/bin/env python3
"""Fails when a crate's modules form a cycle (ARCHITECTURE.md's invariant).

Reads every crate under crates/: each module's `use` lines and `crate::`/`super::`
paths, outside `#[cfg(test)]` blocks. A reference from module `a::b` to an item of
`c::d` is an edge between the two siblings under their common parent (`a` -> `c`);
references to a module's own ancestors (the items a parent shares with its
children) are not edges. Any cycle among siblings is printed and the exit is 1.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def strip(text):
    """The code without comments, strings, characters and #[cfg(test)] items."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r(#*)".*?"\1', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"'(\\.|[^'\\])'", "' '", text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if semi != -1 and (j == -1 or semi < j):
            i = semi + 1
            continue
        depth = 0
        for k in range(j, len(text)):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            if depth == 0:
                i = k + 1
                break
    out.append(text[i:])
    return "".join(out)


def modules(src):
    """Module path (tuple) -> file, for every file module of a crate."""
    found = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("").parts
        if rel in (("lib",), ("main",)):
            found[()] = f
        elif rel[-1] == "mod":
            found[rel[:-1]] = f
        elif "bin" not in rel:
            found[rel] = f
    return found


def use_paths(tree, prefix=""):
    """Expands a `use` tree (`a::{b, c::d}`) into its paths."""
    tree = tree.strip()
    depth, start, parts = 0, None, []
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                start = k
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                head = tree[:start]
                inner, piece = tree[start + 1:k], []
                d = 0
                for c in inner:
                    if c == "," and d == 0:
                        parts.append(prefix + head + "".join(piece))
                        piece = []
                        continue
                    d += {"{": 1, "}": -1}.get(c, 0)
                    piece.append(c)
                parts.append(prefix + head + "".join(piece))
                return [p for part in parts for p in use_paths(part)] if len(parts) > 0 else []
    return [prefix + tree] if tree else []


def resolve(module, path, known):
    """The module path `path` (a `::` path written in `module`) names, or None
    when it leaves the crate."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = module
        while segs and segs[0] in ("super", "self"):
            base = base[:-1] if segs[0] == "super" else base
            segs = segs[1:]
    elif module + (segs[0],) in known:
        base = module
    else:
        return None
    target = base
    for s in segs:
        if target + (s,) in known:
            target = target + (s,)
        else:
            break
    return target, segs[len(target) - len(base):]


def reexports(known, texts):
    """(module, name) -> the module that defines what `module` re-exports as `name`."""
    found = {}
    for module, text in texts.items():
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            for p in use_paths(m.group(1)):
                p, _, alias = p.partition(" as ")
                p = re.sub(r"\s+", "", p)
                name = alias.strip() or p.split("::")[-1]
                r = resolve(module, p, known)
                if r and r[0] != module and name not in ("*", "self"):
                    found[(module, name)] = r[0]
    return found


def references(module, text, known, exported):
    """The modules that `module`'s code refers to."""
    refs = set()
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += [re.sub(r"\s+", "", p.partition(" as ")[0]) for p in use_paths(m.group(1))]
    paths += re.findall(r"\b(?:crate|super|self)(?:::\w+)+", text)
    for p in paths:
        r = resolve(module, p, known)
        if r is None:
            continue
        target, rest = r
        seen = set()
        while rest and (target, rest[0]) in exported and (target, rest[0]) not in seen:
            seen.add((target, rest[0]))
            target, rest = exported[(target, rest[0])], rest[1:]
        refs.add(target)
    return refs


def cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main():
    failed = False
    for src in sorted(ROOT.glob("crates/*/src")):
        known = modules(src)
        texts = {m: strip(f.read_text()) for m, f in known.items()}
        exported = reexports(known, texts)
        edges, why = {}, {}
        for module in known:
            for target in references(module, texts[module], known, exported):
                n = 0
                while n < min(len(module), len(target)) and module[n] == target[n]:
                    n += 1
                if n == len(module) or n == len(target):
                    continue  # an ancestor or a descendant
                a, b = module[: n + 1], target[: n + 1]
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), set()).add("::".join(module) or "lib")
        for comp in cycles(edges):
            failed = True
            names = ["::".join(c) for c in comp]
            print(f"{src.parent.name}: module cycle among {', '.join(names)}")
            for a in comp:
                for b in sorted(edges.get(a, ())):
                    if b in comp:
                        print(f"    {'::'.join(a)} -> {'::'.join(b)} (in {', '.join(sorted(why[(a, b)]))})")
    if failed:
        sys.exit(1)
    print("no module cycles")


if __name__ == "__main__":
    main()
