"""Shared helpers for the ring vector generators.

Keys are generated, never typed: a fixed list of probes, "key-<i>", and
random printable-ASCII and Unicode strings from a seeded RNG, so every run
produces the same list.  Every ring vector file uses the same keys.
"""

import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
OUT_DIR = os.path.join(REPO, "tests", "vectors", "ring")
BUILD_DIR = os.path.join(REPO, "build", "ring-vectors")

SEED = 20240601
N_SEQUENTIAL = 700
N_ASCII = 150
N_UNICODE = 150

# Unicode ranges for random keys (no surrogates, no control characters).
_UNICODE_RANGES = [
    (0x00A1, 0x00FF),    # Latin-1 supplement
    (0x0391, 0x03C9),    # Greek
    (0x0410, 0x044F),    # Cyrillic
    (0x05D0, 0x05EA),    # Hebrew
    (0x3041, 0x3096),    # Hiragana
    (0x4E00, 0x9FFF),    # CJK unified ideographs
    (0xAC00, 0xD7A3),    # Hangul syllables
    (0x1F300, 0x1F64F),  # emoji (4-byte UTF-8)
    (0x0300, 0x036F),    # combining marks
]


def make_keys():
    rng = random.Random(SEED)
    keys = ["", "test", "apple", "0", "foo", "bar"]
    keys += ["key-%d" % i for i in range(N_SEQUENTIAL)]
    printable = [chr(c) for c in range(0x20, 0x7F)]
    for _ in range(N_ASCII):
        keys.append("".join(rng.choice(printable) for _ in range(rng.randint(1, 24))))
    for _ in range(N_UNICODE):
        chars = []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.3:
                chars.append(rng.choice(printable))
            else:
                lo, hi = rng.choice(_UNICODE_RANGES)
                chars.append(chr(rng.randint(lo, hi)))
        keys.append("".join(chars))
    # de-duplicate, keeping the first occurrence
    seen = set()
    out = []
    for k in keys:
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


KEYS = make_keys()


def _dump(value):
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def write_vector(name, generator, peer, profile, nodes, point_count, keys, expect,
                 options=None, replicas=None):
    """Write tests/vectors/ring/<name>.json in the format of tests/vectors/README.md.

    Layout: one top-level field per line, one list element per line, so diffs
    between regenerations stay readable.
    """
    assert len(keys) == len(expect), (name, len(keys), len(expect))
    if replicas is not None:
        assert len(replicas["expect"]) == len(keys)
    doc = [
        ("generator", generator),
        ("peer", peer),
        ("profile", profile),
        ("options", options or {}),
        ("nodes", [[n, w] for n, w in nodes]),
        ("point_count", point_count),
        ("keys", list(keys)),
        ("expect", list(expect)),
    ]
    if replicas is not None:
        doc.append(("replicas", replicas))
    lines = ["{"]
    for i, (k, v) in enumerate(doc):
        comma = "," if i + 1 < len(doc) else ""
        if isinstance(v, list) and k in ("nodes", "keys", "expect"):
            lines.append("  %s: [" % _dump(k))
            for j, item in enumerate(v):
                lines.append("    %s%s" % (_dump(item), "," if j + 1 < len(v) else ""))
            lines.append("  ]%s" % comma)
        elif k == "replicas":
            lines.append("  %s: {" % _dump(k))
            lines.append("    %s: %s," % (_dump("n"), _dump(v["n"])))
            lines.append("    %s: [" % _dump("expect"))
            for j, item in enumerate(v["expect"]):
                lines.append("      %s%s" % (_dump(item), "," if j + 1 < len(v["expect"]) else ""))
            lines.append("    ]")
            lines.append("  }%s" % comma)
        else:
            lines.append("  %s: %s%s" % (_dump(k), _dump(v), comma))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # sanity: the hand-rolled layout is valid JSON
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print("wrote %s (%d keys, point_count=%s, %d bytes)"
          % (os.path.relpath(path, REPO), len(keys), point_count, len(text.encode("utf-8"))))
    return path


def rel_generator(path):
    return os.path.relpath(os.path.abspath(path), REPO)
