#!/usr/bin/env python3
"""Import circles and back-arrows in the workspace's Rust crates.

Reads each crate's module tree (`mod` declarations from lib.rs / main.rs, inline `mod x {}`
blocks included) and every reference one file makes to another: `use` trees and paths in
code that start with `crate::`, `$crate::`, `super::`, `self::` or a child module's name.
Comments and string literals are skipped; test modules count (a circle through a test is
still a circle). An arrow goes from a file to the file of the longest module its path
names: `super::leaf::Leaf` reaches leaf.rs, but `super::Leaf` reaches the folder's mod.rs
even when mod.rs only re-exports it (files that meet through their folder's facade do not
lean on each other), and a module's uses of its own descendants are containment, not
arrows.

Two checks:
  * circles: every set of two or more files of one crate that reach each other (a strongly
    connected component of the file graph), reported with the folder ("room") they sit in;
  * order: core's top-level modules (`core/src/<module>`) in the order docs/design.md
    declares ("Core's modules, lowest first: ..."): a file may use only modules declared
    before its own. A use of a later module is a back-arrow. The declared list must name
    every top-level module of core and nothing else.

Exit status 1 when either check finds anything; the counts are printed either way.

Usage: python3 scripts/imports.py [--verbose]   (--verbose: every arrow of each circle)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRATES = [
    "core",
    "redis",
    "service",
    "cli",
    "bench",
    "bindings-py",
    "bindings-js",
    "bindings-c",
    "fuzz",
]
DESIGN = ROOT / "docs" / "design.md"
ORDER_LINE = "Core's modules, lowest first:"

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ITEM_RE = re.compile(
    r"\b(?:fn|struct|enum|const|static|trait|type|union|mod)\s+(" + IDENT + r")"
    r"|\bmacro_rules!\s*(" + IDENT + r")"
)
PATH_RE = re.compile(r"(?<![A-Za-z0-9_$:])(\$crate|crate|super|self|" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)")


def strip(text):
    """The code with comments, string and character literals blanked (line breaks kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "rb" and re.match(r"(?:br|rb|r)#*\"", text[i:i + 40]) and not re.match(r"[A-Za-z0-9_]", text[i - 1:i] or " "):
            m = re.match(r"(?:br|rb|r)(#*)\"", text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append(' ""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i) and not re.match(r"[A-Za-z0-9_]", text[i - 1:i] or " ")):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(' ""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A character literal ('a', '\n', '\u{..}', b'x' handled as 'x'); else a lifetime.
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^'\\\n])'", text[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_tree(body):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (aliases dropped)."""
    body = re.sub(r"\s+", "", re.sub(r"\s+as\s+" + IDENT, "", body))
    paths = []

    def walk(prefix, s):
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for part in parts:
            if not part:
                continue
            brace = part.find("{")
            if brace >= 0 and part.endswith("}"):
                head = part[:brace].rstrip(":")
                walk(prefix + ([head] if head else []), part[brace + 1:-1])
            else:
                paths.append(prefix + [part])

    walk([], body)
    out = []
    for p in paths:
        segs = []
        for x in p:
            segs += [s for s in x.split("::") if s]
        out.append(segs)
    return out


class Module:
    def __init__(self, path, file, inline):
        self.path = path  # tuple of names from the crate root
        self.file = file  # the file that holds it
        self.inline = inline  # an inline `mod x {}` block
        self.items = set()
        self.children = set()
        self.uses = []  # (segments, is_pub)


class Crate:
    def __init__(self, name, root_files):
        self.name = name
        self.modules = {}  # path tuple -> Module
        self.refs = []  # (file, module path, segments, from_use, is_pub)
        for root in root_files:
            self.load(root, (), True)

    def load(self, file, path, owns_dir):
        text = strip(file.read_text(encoding="utf-8"))
        self.modules[path] = Module(path, file, False)
        self.parse(text, file, path, owns_dir)

    def parse(self, text, file, path, owns_dir):
        # Inline modules: `mod name {` ... matching `}`.
        stack = [(path, -1)]
        depth = 0
        pos = 0
        token = re.compile(r"\{|\}|\bmod\s+(" + IDENT + r")\s*(\{|;)|\b(?:pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);")
        for m in token.finditer(text):
            cur = stack[-1][0]
            t = m.group(0)
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if len(stack) > 1 and depth == stack[-1][1]:
                    stack.pop()
            elif m.group(1):
                name = m.group(1)
                self.modules[cur].children.add(name)
                self.modules[cur].items.add(name)
                child = cur + (name,)
                if m.group(2) == "{":
                    self.modules[child] = Module(child, file, True)
                    stack.append((child, depth))
                    depth += 1
                else:
                    base = file.parent if owns_dir else file.parent / file.stem
                    for inline in cur[len(path):]:
                        base = base / inline
                    for cand in (base / (name + ".rs"), base / name / "mod.rs"):
                        if cand.exists():
                            self.load(cand, child, cand.name == "mod.rs")
                            break
            elif m.group(3) is not None:
                is_pub = t.lstrip().startswith("pub")
                for segs in split_tree(m.group(3)):
                    self.modules[cur].uses.append((segs, is_pub))
                    self.refs.append((file, cur, segs, True, is_pub))
                    if segs and segs[-1] not in ("*", "self"):
                        self.modules[cur].items.add(segs[-1])
        # Items and paths in code, attributed to the innermost module by position.
        spans = self.spans(text, path)
        for m in ITEM_RE.finditer(text):
            self.modules[self.at(spans, m.start(), path)].items.add(m.group(1) or m.group(2))
        uses = [(u.start(), u.end()) for u in re.finditer(r"\buse\s+[^;]*;", text)]
        for m in PATH_RE.finditer(text):
            if any(a <= m.start() < b for a, b in uses):
                continue
            segs = [m.group(1)] + [s for s in re.split(r"\s*::\s*", m.group(2)) if s]
            if segs[0] == "$crate":
                segs[0] = "crate"
            self.refs.append((file, self.at(spans, m.start(), path), segs, False, False))

    def spans(self, text, path):
        spans = []
        stack = [(path, -1, 0)]
        depth = 0
        for m in re.finditer(r"\{|\}|\bmod\s+(" + IDENT + r")\s*\{", text):
            if m.group(1):
                stack.append((stack[-1][0] + (m.group(1),), depth, m.start()))
                depth += 1
            elif m.group(0) == "{":
                depth += 1
            else:
                depth -= 1
                if len(stack) > 1 and depth == stack[-1][1]:
                    p, _, start = stack.pop()
                    spans.append((start, m.end(), p))
        return spans

    @staticmethod
    def at(spans, pos, path):
        best = path
        for start, end, p in spans:
            if start <= pos < end and len(p) > len(best):
                best = p
        return best

    def absolute(self, here, segs):
        """The path from the crate root, or None for another crate's."""
        segs = list(segs)
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] in ("self", "super"):
            base = list(here)
            while segs and segs[0] in ("self", "super"):
                if segs.pop(0) == "super":
                    if not base:
                        return None
                    base.pop()
            return base + segs
        if segs[0] in self.modules.get(tuple(here), Module((), None, False)).children:
            return list(here) + segs
        return None

    def resolve(self, segs):
        """The module the absolute path `segs` reaches: its longest prefix that is a module.

        Names a module re-exports are not followed to the file that defines them: a file
        that uses `super::Name` leans on its folder's facade, not on a sibling.
        """
        k = len(segs)
        while k > 0 and tuple(segs[:k]) not in self.modules:
            k -= 1
        return self.modules.get(tuple(segs[:k]))

    def file_path(self, file):
        return min((m.path for m in self.modules.values() if m.file == file and not m.inline), key=len)

    def edges(self):
        edges = {}
        for file, here, segs, _, _ in self.refs:
            target = self.absolute(here, segs)
            if target is None:
                continue
            mod = self.resolve(target)
            if mod is None or mod.file == file:
                continue
            # A module's uses of its own descendants are containment, not arrows.
            own = self.file_path(file)
            if mod.path[: len(own)] == own:
                continue
            edges.setdefault(file, {}).setdefault(mod.file, []).append("::".join(segs))
        return edges


def components(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def rel(p):
    return str(p.relative_to(ROOT))


def crate_roots(name):
    src = ROOT / name / "src"
    return [f for f in (src / "lib.rs", src / "main.rs") if f.exists()]


def declared_order():
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        if line.startswith(ORDER_LINE):
            return re.findall(r"`([a-z_0-9]+)`", line[len(ORDER_LINE):])
    return None


def top_module(crate, file):
    src = ROOT / crate / "src"
    parts = file.relative_to(src).parts
    if len(parts) == 1 and parts[0] in ("lib.rs", "main.rs"):
        return None
    return parts[0][:-3] if parts[0].endswith(".rs") else parts[0]


def main():
    verbose = "--verbose" in sys.argv[1:]
    circles = 0
    problems = []
    core_edges = None
    for name in CRATES:
        roots = crate_roots(name)
        if not roots:
            continue
        crate = Crate(name, roots)
        edges = crate.edges()
        files = sorted({m.file for m in crate.modules.values()})
        if name == "core":
            core_edges = edges
            core_files = files
        for comp in components(files, edges):
            circles += 1
            folders = sorted({rel(f.parent) for f in comp})
            room = folders[0] if len(folders) == 1 else " + ".join(folders)
            problems.append(f"circle in {room}: {', '.join(rel(f) for f in comp)}")
            if verbose:
                inside = set(comp)
                for a in comp:
                    for b, via in sorted(edges.get(a, {}).items()):
                        if b in inside:
                            problems.append(f"    {rel(a)} -> {rel(b)} ({', '.join(sorted(set(via)))})")
    # Core's order.
    back = 0
    order = declared_order()
    actual = sorted({top_module("core", f) for f in core_files} - {None})
    if order is None:
        problems.append(f"docs/design.md has no line starting {ORDER_LINE!r}")
    else:
        for missing in sorted(set(actual) - set(order)):
            problems.append(f"core module {missing!r} is missing from the order in docs/design.md")
        for extra in sorted(set(order) - set(actual)):
            problems.append(f"the order in docs/design.md names {extra!r}, which core does not have")
        rank = {m: i for i, m in enumerate(order)}
        for a, targets in sorted(core_edges.items()):
            ma = top_module("core", a)
            for b, via in sorted(targets.items()):
                mb = top_module("core", b)
                if None in (ma, mb) or ma == mb or ma not in rank or mb not in rank:
                    continue
                if rank[mb] > rank[ma]:
                    back += 1
                    problems.append(
                        f"back-arrow in core: {rel(a)} ({ma}) uses {rel(b)} ({mb}), which the order "
                        f"puts above {ma} ({', '.join(sorted(set(via)))})"
                    )
    for p in problems:
        print(p)
    print(f"imports: {circles} circle(s), {back} back-arrow(s) in core")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
