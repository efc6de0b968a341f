"""keyroute.SlotMap, group_by_slot and the redirect handling."""

from __future__ import annotations

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
    with pytest.raises(keyroute.SlotMapError):
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
    with pytest.raises(ValueError):
        m.apply_redirect("MOVED 99999 h:1", "h")


def test_grouping() -> None:
    m, a, b, c = three_masters()
    assert m.group_by_node(["foo", "bar", "baz"]) == [(a, [1, 2]), (c, [0])]
    groups = keyroute.group_by_slot(["{a}1", "{b}", "{a}2"])
    assert sorted(idx for _, idx in groups) == [[0, 2], [1]]
    assert all(s == keyroute.key_slot(k) for s, idx in groups for k in [["{a}1", "{b}", "{a}2"][idx[0]]])


def test_errors() -> None:
    m, a, b, c = three_masters()
    with pytest.raises(keyroute.SlotMapError):
        m.add_master("id-a", "h:1")  # duplicate id
    with pytest.raises(keyroute.SlotMapError):
        m.add_master("x", "no-port")
    with pytest.raises(keyroute.SlotMapError):
        m.assign(10, 5, a)
    with pytest.raises(ValueError):
        m.assign(0, 16384, a)
    with pytest.raises(KeyError):
        m.assign(0, 1, 99)
    with pytest.raises(ValueError):
        m.owner(-1)
    r = m.add_replica(a, "r", "h:2")
    with pytest.raises(keyroute.SlotMapError):
        m.assign(0, 1, r)  # not a master
    with pytest.raises(IndexError):
        m[42]


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
