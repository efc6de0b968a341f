#!/usr/bin/env python3
"""The C boundary's cost in instructions, counted by callgrind (make bench-c-callgrind).

Wall time on a shared VM drifts by more than the boundary costs; instruction counts do
not: callgrind gives the same total for the same binary and inputs whatever else the
machine is doing. For each operation this runs, under `valgrind --tool=callgrind
--toggle-collect=loop_*`,

  * abi_c (bench/abi.c, linked against the shared libkeyroute), which calls the C entry
    point N times, and
  * abi (bench/abi.rs), which calls the Rust function it wraps N times, inlined,

each at N and at 2N calls; (Ir(2N) - Ir(N)) / N is the count per call, free of the
constant part (the loop's prologue, the first call's symbol binding). The difference
between the two is what the boundary adds per call.

usage: callgrind.py ABI_C ABI_RUST [--json PATH] [--calls N]
(ABI_RUST `cargo`: build bench/abi.rs with `cargo bench --no-run` and use that)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CASES = [
    ("ring_get", "libketama"),
    ("ring_get", "native"),
    ("ring_get_index", "libketama"),
    ("ring_get_index", "native"),
    ("key_slot", "-"),
]

C_NAME = {
    "ring_get": "keyroute_ring_get",
    "ring_get_index": "keyroute_ring_get_index",
    "key_slot": "keyroute_key_slot",
}
RUST_NAME = {
    "ring_get": "Ring::get",
    "ring_get_index": "Ring::get_index",
    "key_slot": "key_slot",
}


def instructions(exe: str, op: str, profile: str, n: int) -> int:
    """Ir counted inside loop_<op> (and what it calls) for one run of `exe op profile n`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--quiet",
            f"--callgrind-out-file={out}",
            f"--toggle-collect=*loop_{op}*",
            exe,
            op,
            profile,
            str(n),
        ]
        # KEYROUTE_MD5/KEYROUTE_CRC16 are left as they are: valgrind runs the paths this
        # CPU selects (it emulates AVX-512 only partly; see the note in the report).
        subprocess.run(cmd, check=True)
        with open(out, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if m:
                    return int(m.group(1))
    raise SystemExit(f"callgrind.py: no totals in callgrind's output for {cmd}")


def per_call(exe: str, op: str, profile: str, n: int) -> float:
    a = instructions(exe, op, profile, n)
    b = instructions(exe, op, profile, 2 * n)
    return (b - a) / n


def cargo_abi() -> str:
    """Builds bench/abi.rs (the bench profile) and returns its executable."""
    cargo = os.environ.get("CARGO", "cargo")
    out = subprocess.run(
        [cargo, "bench", "-p", "keyroute-c", "--bench", "abi", "--no-run",
         "--message-format=json"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg.get("target", {}).get("name") == "abi":
            return str(msg["executable"])
    raise SystemExit("callgrind.py: cargo built no `abi` bench executable")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("abi_c")
    ap.add_argument("abi_rust")
    ap.add_argument("--json")
    ap.add_argument("--calls", type=int, default=4096)
    args = ap.parse_args()
    if args.abi_rust == "cargo":
        args.abi_rust = cargo_abi()

    rows = []
    print(f"{'operation':<44} {'C':>9} {'Rust':>9} {'C - Rust':>9}  instructions per call")
    for op, profile in CASES:
        c = per_call(args.abi_c, op, profile, args.calls)
        r = per_call(args.abi_rust, op, profile, args.calls)
        label = C_NAME[op] + ("" if profile == "-" else f" ({profile})")
        print(f"{label:<44} {c:9.1f} {r:9.1f} {c - r:+9.1f}")
        what = (
            f"C {C_NAME[op]} vs Rust {RUST_NAME[op]} (inlined), "
            + ("" if profile == "-" else f"{profile} profile, 100 servers, ")
            + "16 B keys, instructions per call (callgrind)"
        )
        rows.append(
            {
                "id": f"ffi-ir/{op}" + ("" if profile == "-" else f"-{profile}"),
                "group": "C ABI overhead (instructions)",
                "what": what,
                "measure": "instructions",
                "unit": "Ir/call",
                "better": "lower",
                "keyroute": c,
                "peer": f"the Rust call it wraps ({RUST_NAME[op]}, inlined)",
                "peer_version": None,
                "peer_value": r,
                "ratio": r / c if c else None,
                "same_answers": None,
                "like_for_like": True,
                "headline": False,
                "note": f"C call - Rust call = {c - r:+.1f} instructions "
                f"({100.0 * (c - r) / r:+.1f}%)",
            }
        )
    if args.json:
        doc = {
            "schema": 1,
            "suite": "c-callgrind",
            "source": "bindings-c/bench/abi.c, abi.rs, callgrind.py",
            "method": f"callgrind instruction counts inside loop_<op>: (Ir at {2 * args.calls}"
            f" calls - Ir at {args.calls}) / {args.calls}",
            "unix_time": int(time.time()),
            "load_average": list(os.getloadavg()),
            "rows": rows,
        }
        tmp = args.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
