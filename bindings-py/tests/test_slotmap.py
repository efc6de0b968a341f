"""keyroute.SlotMap, group_by_slot and the redirect handling."""

from __future__ import annotations

from typing import Any

import pytest

import keyroute
from keyroute import SlotMap


def three_masters() -> tuple[SlotMap, int, int, int]:
    m = SlotMap()
    a = m.add_master("id-a", "10.0.0.1:7000")
    b = m.add_master("id-b", "10.0.0.2:7000")
    c = m.add_master("id-c", "[::1]:7002")
    m.assign(0, 5460, a)
    m.assign(5461, 10922, b)
    m.assign(10923, 16383, c)
    return m, a, b, c


def test_build_and_lookup() -> None:
    m, a, b, c = three_masters()
    assert (a, b, c) == (0, 1, 2) and len(m) == 3
    assert m.is_complete()
    assert m.owner(0) == a and m.owner(16383) == c
    assert m.owner_of_key("foo") == c  # slot 12182
    assert m.owner_of_key(b"bar") == a  # slot 5061
    assert m.address_for_key("foo") == "[::1]:7002"
    assert m.address_for_slot(5461) == "10.0.0.2:7000"
    assert m.slot_counts() == [5461, 5462, 5461]
    assert m.ranges() == [(0, 5460, 0), (5461, 10922, 1), (10923, 16383, 2)]
    assert m.find_id("id-b") == b and m.find_id("x") is None
    assert m.find_address("::1:7002") == c
    r = m.add_replica(a, "id-a2", "10.0.0.9:7000")
    m.set_health(r, "online")
    node = m.node(r)
    assert node["role"] == "replica" and node["master"] == a and node["health"] == "online"
    assert m[a]["replicas"] == [r]
    assert "4 nodes" in repr(m)
    m.unassign(0, 99)
    assert m.owner(50) is None and not m.is_complete()


def test_from_cluster_slots_reply() -> None:
    reply = [
        [0, 5460, [b"127.0.0.1", 7000, b"id-a"], [b"127.0.0.1", 7003, b"id-a1"]],
        [5461, 10922, ["127.0.0.1", 7001, "id-b"]],
        [10923, 16383, [b"::1", 7002, b"id-c", {"hostname": "c"}]],
    ]
    m = SlotMap.from_slots(reply)
    assert m.is_complete() and len(m) == 4
    assert m.address_for_key("foo") == "[::1]:7002"
    a = m.find_id("id-a")
    assert a is not None and m.node(a)["replicas"] == [m.find_id("id-a1")]
    with pytest.raises(keyroute.SlotMapError):
        SlotMap.from_slots([[0, 10, [b"h", 1, b"x"]], [5, 20, [b"h", 2, b"y"]]])
    with pytest.raises(keyroute.BadTypeError):
        SlotMap.from_slots([[0, 10]])


def test_redirects() -> None:
    m, a, b, c = three_masters()
    kind, addr, node = m.apply_redirect("ASK 42 10.0.0.2:7000", "10.0.0.1")
    assert (kind, addr, node) == ("ask", "10.0.0.2:7000", b)
    assert m.owner(42) == a  # ASK never changes the map
    kind, addr, node = m.apply_redirect(b"MOVED 42 :7005", "10.0.0.1")
    assert kind == "moved" and addr == "10.0.0.1:7005" and node == 3
    assert m.owner(42) == 3 and m.owner(43) == a
    with pytest.raises(keyroute.RedirectError):
        m.apply_redirect("WRONGTYPE nope", "h")
    with pytest.raises(ValueError) as bad:
        m.apply_redirect("MOVED 99999 h:1", "h")
    assert bad.value.code == "BAD_REDIRECT"  # type: ignore[attr-defined]
    assert keyroute.parse_redirect("ASK 12182 [::1]:7001") == ("ask", 12182, "::1", 7001)
    assert keyroute.parse_redirect(b"MOVED 1 :7000") == ("moved", 1, "", 7000)


def test_grouping() -> None:
    m, a, b, c = three_masters()
    assert m.group_by_node(["foo", "bar", "baz"]) == [(a, [1, 2]), (c, [0])]
    groups = keyroute.group_by_slot(["{a}1", "{b}", "{a}2"])
    assert sorted(idx for _, idx in groups) == [[0, 2], [1]]
    assert all(s == keyroute.key_slot(k) for s, idx in groups for k in [["{a}1", "{b}", "{a}2"][idx[0]]])


def test_errors() -> None:
    m, a, b, c = three_masters()

    def code(call, cls=keyroute.KeyrouteError):  # type: ignore[no-untyped-def]
        with pytest.raises(cls) as info:
            call()
        return info.value.code

    assert code(lambda: m.add_master("id-a", "h:1"), keyroute.SlotMapError) == "DUPLICATE_NODE"
    assert code(lambda: m.add_master("x", "no-port"), keyroute.SlotMapError) == "BAD_ADDRESS"
    assert code(lambda: m.add_master("x", "h:0"), keyroute.SlotMapError) == "BAD_PORT"
    assert code(lambda: m.add_master("x", ("", 7000)), keyroute.SlotMapError) == "BAD_ADDRESS"
    assert code(lambda: m.add_master("x", ("h", 2**64)), keyroute.SlotMapError) == "BAD_PORT"
    assert code(lambda: m.add_master("x", ["h", 1]), keyroute.BadTypeError) == "BAD_TYPE"
    assert code(lambda: m.assign(10, 5, a), keyroute.SlotMapError) == "BAD_RANGE"
    assert code(lambda: m.assign(0, 16384, a), ValueError) == "BAD_RANGE"
    assert code(lambda: m.assign(-1, 2**70, a), ValueError) == "BAD_RANGE"
    assert code(lambda: m.assign(0, 1, 99), KeyError) == "UNKNOWN_NODE"
    assert code(lambda: m.owner(-1), ValueError) == "BAD_SLOT"
    assert code(lambda: m.owner(16384), keyroute.SlotMapError) == "BAD_SLOT"
    r = m.add_replica(a, "r", ("h", 2))
    assert code(lambda: m.assign(0, 1, r), keyroute.SlotMapError) == "NOT_A_MASTER"
    assert code(lambda: m[42], IndexError) == "UNKNOWN_NODE"
    assert [n["index"] for n in m] == [0, 1, 2, 3]  # iteration stops at the missing node


def test_plan() -> None:
    m = SlotMap()
    a = m.add_master("id-a", "10.0.0.1:7000")
    b = m.add_master("id-b", ("10.0.0.2", 7000))
    c = m.add_master("id-c", "10.0.0.3:7000")  # new, no slots
    m.assign(0, 8191, a)
    m.assign(8192, 16383, b)
    plan = keyroute.Plan(m, {a: 1, "10.0.0.2:7000": 1, "id-c": 1})
    assert plan.slots_moved == 5461 and len(plan) == len(plan.moves) >= 1
    assert all(to == c and frm in (a, b) for _, _, frm, to in plan.moves)
    assert [t["node"] for t in plan.targets] == [a, b, c]
    assert sum(t["after"] for t in plan.targets) == 16384
    assert "5461 slots moved" in repr(plan)
    same = keyroute.Plan(m, keyroute.parse_weights("10.0.0.1:7000=1,10.0.0.2:7000=1,id-c=1"))
    assert same.moves == plan.moves
    plan.apply(m)
    assert sorted(m.slot_counts()) == [5461, 5461, 5462]
    with pytest.raises(keyroute.PlanError) as stale:
        plan.apply(m)
    assert stale.value.code == "STALE_PLAN"
    for weights, code in (
        ({a: 0, b: 0, c: 0}, "BAD_PLAN"),
        ({a: 1}, "BAD_PLAN"),
        ({a: 1, b: 1, c: -1}, "NEGATIVE_WEIGHT"),
        ({a: 1, b: 1, c: 1.5}, "BAD_WEIGHT"),
        ({a: 1, b: 1, "nope:1": 1}, "UNKNOWN_NODE"),
        ({a: 1, b: 1, 7: 1}, "UNKNOWN_NODE"),
    ):
        with pytest.raises(keyroute.KeyrouteError) as info:
            keyroute.Plan(m, weights)  # type: ignore[arg-type]
        assert info.value.code == code, weights
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Plan(m, "10.0.0.1:7000=1")  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Plan("map", {})  # type: ignore[arg-type]


def test_from_shards_and_redis_py_shapes() -> None:
    def node(id_: str, port: int, role: str, *, raw: bool = False) -> dict[Any, Any]:
        d = {"id": id_, "port": port, "ip": "127.0.0.1", "endpoint": "127.0.0.1",
             "hostname": "", "role": role, "replication-offset": 0, "health": "online"}
        if raw:
            return {k.encode(): (v.encode() if isinstance(v, str) else v) for k, v in d.items()}
        return d

    shards = [
        {"slots": [(0, 8191)], "nodes": [node("a", 7000, "master"), node("a1", 7003, "replica")]},
        {"slots": [8192, 16383], "nodes": [node("b", 7001, "master", raw=True)]},
        {"slots": [], "nodes": [node("c", 7002, "master")]},  # a new, empty master
    ]
    m = SlotMap.from_shards(shards)
    assert m.is_complete() and len(m) == 4
    assert m.node(m.find_id("a1"))["role"] == "replica"  # type: ignore[arg-type]
    assert m.node(m.find_id("c"))["health"] == "online"  # type: ignore[arg-type]
    # The server's flat RESP2 form.
    flat = [["slots", [0, 16383], "nodes", [["id", "a", "port", 7000, "ip", "127.0.0.1",
                                            "endpoint", "127.0.0.1", "role", "master",
                                            "replication-offset", 0, "health", "online"]]]]
    assert SlotMap.from_shards(flat).address_for_slot(5) == "127.0.0.1:7000"
    # redis-py's RedisCluster.cluster_slots(): a dict without node ids.
    slots = {
        (0, 8191): {"primary": ("127.0.0.1", 7000), "replicas": [("127.0.0.1", 7003)]},
        (8192, 16383): {"primary": ("127.0.0.1", 7001), "replicas": []},
    }
    m2 = SlotMap.from_slots(slots)
    assert m2.is_complete() and len(m2) == 3
    assert m2.address_for_slot(8192) == "127.0.0.1:7001"
    assert m2.node(m2.owner(0))["replicas"] == [1]  # type: ignore[arg-type]
    with pytest.raises(keyroute.SlotMapError) as two:
        SlotMap.from_shards([{"slots": [(0, 10)], "nodes": [node("a", 1, "master")]},
                             {"slots": [(5, 20)], "nodes": [node("b", 2, "master")]}])
    assert two.value.code == "INCONSISTENT_TOPOLOGY"
    with pytest.raises(keyroute.BadTypeError):
        SlotMap.from_redis_py(object())


def test_stub_lists_every_runtime_name() -> None:
    import ast
    from pathlib import Path

    import keyroute._keyroute as native

    stub = Path(keyroute.__file__).with_name("_keyroute.pyi")
    tree = ast.parse(stub.read_text())
    declared = {
        getattr(n, "name", None) or getattr(getattr(n, "target", None), "id", None)
        for n in tree.body
    }
    assert set(native.__all__) <= declared
    assert set(keyroute.__all__) == set(native.__all__)
    assert (Path(keyroute.__file__).parent / "py.typed").exists()
