"""The entrance contract (tests/contract/bad_inputs.json) in Python.

Every case Python can express (all ops; a case may name python in its "skip") gives the
listed value, or raises a keyroute exception whose ``.code`` is the listed code. The run
counts the cases and fails if it ran fewer than the table holds for Python.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

import keyroute

TABLE = Path(
    os.environ.get(
        "KEYROUTE_CONTRACT",
        Path(__file__).resolve().parents[2] / "tests" / "contract" / "bad_inputs.json",
    )
)


def _cases() -> list[dict[str, Any]]:
    with TABLE.open(encoding="utf-8") as f:
        cases: list[dict[str, Any]] = json.load(f)["cases"]
    return cases


CASES = _cases()
PYTHON_CASES = [c for c in CASES if "python" not in c.get("skip", {})]


def _options(args: dict[str, Any]) -> dict[str, Any]:
    return dict(args.get("options") or {})


def _ring(args: dict[str, Any]) -> keyroute.Ring:
    nodes = args["nodes"]
    return keyroute.Ring(nodes, profile=args["profile"], **_options(args))


def _slot_map_with_masters(masters: list[list[Any]]) -> tuple[keyroute.SlotMap, dict[str, int]]:
    m = keyroute.SlotMap()
    index = {}
    for addr, ranges in masters:
        node = m.add_master("", addr)
        for start, end in ranges:
            m.assign(start, end, node)
        index[addr] = node
    return m, index


def _ring_change(a: dict[str, Any]) -> None:
    r = _ring(a)
    if a["change"] == "add":
        r.add(a["name"], a["weight"])
    elif a["change"] == "remove":
        r.remove(a["name"])
    elif a["change"] == "set_weight":
        r.set_weight(a["name"], a["weight"])
    else:  # pragma: no cover - the table has no other change
        pytest.fail(f"unknown change {a['change']}")


def _plan(a: dict[str, Any]) -> None:
    m, index = _slot_map_with_masters(a["masters"])
    keyroute.Plan(m, [(addr, w) for addr, w in a["weights"]])


def _redirect(a: dict[str, Any]) -> list[Any]:
    kind, slot, host, port = keyroute.parse_redirect(a["text"])
    return [kind.upper(), slot, host, port]


def _assign(a: dict[str, Any]) -> None:
    m = keyroute.SlotMap()
    m.assign(a["start"], a["end"], m.add_master("", "10.0.0.1:7000"))


def _pick_many(a: dict[str, Any]) -> int:
    pool = keyroute.Pool(a["members"])
    return len(pool.pick_many(a["n"]))


OPS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "parse_nodes": lambda a: [list(p) for p in keyroute.parse_nodes(a["text"])],
    "parse_weights": lambda a: [list(p) for p in keyroute.parse_weights(a["text"])],
    "ring": lambda a: _ring(a).nodes,
    "ring_change": _ring_change,
    "ring_get_n": lambda a: len(_ring(a).get_n(a["key"], a["n"])),
    "diff": lambda a: _ring(a["a"]).diff(_ring(a["b"])) and None,
    "get_many": lambda a: _ring(a).get_many(a["keys"]),
    "key_slots": lambda a: keyroute.key_slots(a["keys"]),
    "pool_seed": lambda a: keyroute.Pool().seed(a["members"], a["initial"]),
    "pool_restore": lambda a: keyroute.Pool().restore(a["member"], a["mode"]),
    "pool_pick_many": _pick_many,
    # A LeastUsed handle checks its pool key when it is made; it connects lazily.
    "pool_key": lambda a: keyroute.LeastUsed("redis://127.0.0.1:1", a["key"]) and None,
    "slot_map_add_master": lambda a: keyroute.SlotMap().add_master(
        "", (a["host"], a["port"])
    ) and None,
    "slot_map_assign": lambda a: _assign(a),
    "redirect": _redirect,
    "plan": _plan,
}


def test_table_is_read_and_every_op_is_known() -> None:
    assert len(CASES) >= 60
    assert {c["op"] for c in CASES} <= set(OPS), "an op without a Python runner"
    assert all(c["code"] in keyroute.ERROR_CODES for c in CASES if "code" in c)


def _run(case: dict[str, Any]) -> None:
    op = OPS[case["op"]]
    if "code" in case:
        with pytest.raises(keyroute.KeyrouteError) as info:
            op(case["args"])
        assert info.value.code == case["code"], f"{case['id']}: {info.value!r}"
        assert str(info.value), case["id"]
    else:
        got = op(case["args"])
        want = case["ok"]
        if case["op"] in ("ring_change", "diff", "pool_key", "slot_map_add_master",
                          "slot_map_assign", "plan"):
            assert got is None and want is None, case["id"]
        else:
            assert got == want, case["id"]


@pytest.mark.parametrize("case", PYTHON_CASES, ids=[c["id"] for c in PYTHON_CASES])
def test_case(case: dict[str, Any]) -> None:
    _run(case)


def test_every_python_case_ran() -> None:
    # One more pass, counting: the table cannot silently shrink to nothing for Python.
    ran = 0
    for case in PYTHON_CASES:
        _run(case)
        ran += 1
    skipped = len(CASES) - ran
    print(f"contract: {ran} cases ran in Python, {skipped} skipped by the table")
    assert ran == len(PYTHON_CASES) >= 60
