"""The Python API: behaviour, types and errors."""

from __future__ import annotations

import copy
import threading

import pytest

import keyroute
from keyroute import Ring


def test_ketama_golden_facts() -> None:
    ring = Ring({"127.0.0.1:11211": 600, "127.0.0.1:11212": 400}, profile="libketama")
    assert ring.point_count == 320
    assert ring.get("test") == "127.0.0.1:11211"
    assert ring.get(b"test") == "127.0.0.1:11211"


def test_nodes_forms_agree() -> None:
    a = Ring(["a", "b", "c"])
    b = Ring({"a": 1, "b": 1, "c": 1})
    c = Ring([("a", 1), "b", ("c", 1)])
    d = Ring(iter(["a", "b", "c"]))
    e = Ring.from_spec("a,b=1,c=1")
    keys = [f"k{i}" for i in range(500)]
    want = a.get_many(keys)
    for r in (b, c, d, e):
        assert r.get_many(keys) == want


def test_str_is_utf8_bytes_raw() -> None:
    ring = Ring([f"n{i}" for i in range(10)], profile="libketama")
    for k in ["plain", "é", "日本語", "😀", ""]:
        assert ring.get(k) == ring.get(k.encode("utf-8"))


def test_container_protocol_and_repr() -> None:
    ring = Ring({"a": 1, "b": 2})
    assert len(ring) == 2
    assert "a" in ring and "z" not in ring and 3 not in ring and b"a" not in ring
    assert list(ring) == ["a", "b"] == ring.nodes
    assert repr(ring) == "Ring({'a': 1, 'b': 2}, profile='native', points=480)"
    assert ring.weights() == {"a": 1, "b": 2}
    assert ring.weight("b") == 2
    assert ring.profile == "native" and ring.vnodes == keyroute.DEFAULT_NATIVE_VNODES
    big = Ring([f"n{i}" for i in range(20)])
    assert "...12 more" in repr(big)


def test_empty_ring_answers_none() -> None:
    ring = Ring()
    assert ring.get("x") is None
    assert ring.get_n("x", 3) == []
    assert ring.get_many(["x", b"y"] * 300) == [None] * 600
    assert ring.points() == [] and ring.shares() == {} and len(ring) == 0


def test_add_remove_set_weight() -> None:
    ring = Ring(["a", "b"], profile="libketama")
    ring.add("c")
    ring.add("d", weight=3)
    assert ring.weights() == {"a": 1, "b": 1, "c": 1, "d": 3}
    ring.set_weight("a", 5)
    assert ring.weight("a") == 5
    ring.remove("b")
    assert list(ring) == ["a", "c", "d"]
    fresh = Ring({"a": 5, "c": 1, "d": 3}, profile="libketama")
    keys = [f"key{i}" for i in range(1000)]
    assert ring.get_many(keys) == fresh.get_many(keys)


def test_get_n_replicas() -> None:
    ring = Ring({f"n{i}": 1 for i in range(5)})
    for k in ["a", "b", "c"]:
        reps = ring.get_n(k, 3)
        assert len(reps) == len(set(reps)) == 3
        assert reps[0] == ring.get(k)
        assert ring.get_n(k, 99) == ring.get_n(k, 5)
        assert ring.get_n(k, 0) == []
    with pytest.raises(ValueError):
        ring.get_n("a", -1)


def test_points_arcs_shares() -> None:
    ring = Ring({"a": 1, "b": 3}, profile="libketama")
    pts = ring.points()
    assert len(pts) == ring.point_count
    assert [p for p, _ in pts] == sorted(p for p, _ in pts)
    assert {n for _, n in pts} == {"a", "b"}
    shares = ring.shares()
    assert set(shares) == {"a", "b"}
    assert abs(sum(shares.values()) - 1.0) < 1e-12
    assert shares["b"] > shares["a"]
    assert len(ring.arcs()) <= len(pts)


def test_diff() -> None:
    old = Ring(["a", "b", "c"])
    new = old.copy()
    new.add("d")
    assert "d" not in old
    d = old.diff(new)
    assert d.moved and all(m.new_node == "d" for m in d.moved)
    assert abs(d.moved_fraction - d.ideal_fraction) < 1e-12
    assert 0.1 < d.moved_fraction < 0.4
    m = d.moved[0]
    assert m.start <= m.end and m.old_node in {"a", "b", "c"}
    assert "MovedArc(" in repr(m) and "RingDiff(" in repr(d)
    assert old.diff(copy.copy(old)).moved_fraction == 0.0
    assert copy.deepcopy(old).get_many(["x", "y"]) == old.get_many(["x", "y"])
    with pytest.raises(keyroute.RingError):
        old.diff(Ring(["a"], profile="libketama"))


@pytest.mark.parametrize("profile", keyroute.PROFILES)
def test_pickle_round_trip(profile: str) -> None:
    import pickle

    ring = Ring({"a:11211": 2, "b:11212": 1, "c": 3}, profile=profile, vnodes=33)
    back = pickle.loads(pickle.dumps(ring))
    assert back.weights() == ring.weights() and back.profile == profile
    assert back.points() == ring.points()
    node_js = Ring(["a:11211", "b:1"], profile="node-hashring", default_port=11211,
                   points_per_digest=3)
    back = pickle.loads(pickle.dumps(node_js))
    assert back.points() == node_js.points() and back.default_port == 11211


def test_profiles_and_options() -> None:
    assert keyroute.PROFILES == (
        "native", "libketama", "libmemcached", "uhashring", "node-hashring", "hash_ring",
    )
    for p in keyroute.PROFILES:
        assert Ring(["a"], profile=p).profile == p
    # "twemproxy", the old name of the libmemcached ring, still builds it.
    assert Ring(["a"], profile="twemproxy").profile == "libmemcached"
    assert Ring(["a"], vnodes=10).point_count == 10
    assert Ring(["a"], profile="uhashring", points_per_digest=2).points_per_digest == 2
    assert Ring(["a:11211"], profile="node-hashring", default_port=11211).default_port == 11211
    assert Ring(["a"], profile="libmemcached").default_port == 11211


@pytest.mark.parametrize(
    "call",
    [
        lambda: Ring(["a"], profile="nope"),
        lambda: Ring({"a": 0}),
        lambda: Ring({"a": -3}),
        lambda: Ring({"a": 2**32}),
        lambda: Ring({"a": 10**30}),
        lambda: Ring(["a", "a"]),
        lambda: Ring([""]),
        lambda: Ring(["a"], vnodes=0),
        lambda: Ring(["a"], vnodes=-1),
        lambda: Ring(["a"], vnodes=70000),
        lambda: Ring(["a"], points_per_digest=2),
        lambda: Ring(["a"], profile="libketama", points_per_digest=5),
        lambda: Ring(["a"], default_port=70000),
        lambda: Ring.from_spec("a=x"),
        lambda: Ring.from_spec("a:2"),
        lambda: Ring.from_spec(""),
        lambda: Ring(["a"]).add("a"),
        lambda: Ring(["a"]).add("b", 0),
        lambda: Ring(["a"]).set_weight("a", 0),
        lambda: Ring(["a"], vnodes=65536).add("b", 2**20),
    ],
)
def test_bad_input_is_value_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, keyroute.KeyrouteError)
    assert isinstance(info.value, keyroute.RingError)
    assert str(info.value)


def test_failed_change_leaves_ring_unchanged() -> None:
    ring = Ring(["a"], vnodes=65536)
    with pytest.raises(keyroute.RingError):
        ring.add("b", 2**20)
    assert list(ring) == ["a"]
    with pytest.raises(keyroute.RingError):
        ring.set_weight("a", 2**20)
    assert ring.weight("a") == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda: Ring(["a"]).remove("b"),
        lambda: Ring(["a"]).set_weight("b", 2),
        lambda: Ring(["a"]).weight("b"),
    ],
)
def test_missing_node_is_key_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KeyError) as info:
        call()
    assert isinstance(info.value, keyroute.NodeNotFoundError)
    assert isinstance(info.value, keyroute.KeyrouteError)


@pytest.mark.parametrize(
    "call",
    [
        lambda: Ring(["a"]).get(1),  # type: ignore[arg-type]
        lambda: Ring(["a"]).get(bytearray(b"x")),  # type: ignore[arg-type]
        lambda: Ring(["a"]).get_many(["x", 2]),  # type: ignore[list-item]
        lambda: Ring(["a"]).get_many("abc"),
        lambda: Ring(["a"]).get_many(None),  # type: ignore[arg-type]
        lambda: Ring("abc"),
        lambda: Ring(b"abc"),  # type: ignore[arg-type]
        lambda: Ring(5),  # type: ignore[arg-type]
        lambda: Ring([1]),  # type: ignore[list-item]
        lambda: Ring([("a", 1, 2)]),  # type: ignore[list-item]
        lambda: Ring({"a": "1"}),  # type: ignore[dict-item]
        lambda: Ring({"a": True}),
        lambda: Ring(["a"], vnodes=1.5),  # type: ignore[arg-type]
        lambda: Ring(["a"], profile=3),  # type: ignore[arg-type]
        lambda: Ring(["a"]).get_n("x", 1.0),  # type: ignore[arg-type]
        lambda: Ring(["a"]).add(1),  # type: ignore[arg-type]
        lambda: Ring(["a"]).diff("b"),  # type: ignore[arg-type]
        lambda: keyroute.key_slot(3),  # type: ignore[arg-type]
        lambda: keyroute.key_slots(b"abc"),
        lambda: keyroute.key_slots_array("abc"),
        lambda: keyroute.key_slots_array(["a", 3]),
        lambda: keyroute.key_slots_array(7),  # type: ignore[arg-type]
        lambda: keyroute.hash_tag(None),  # type: ignore[call-overload]
        lambda: keyroute.parse_nodes(["a"]),  # type: ignore[arg-type]
        lambda: keyroute.Pool("ab"),
        lambda: keyroute.Pool().seed(["a"], overwrite="yes"),  # type: ignore[arg-type]
        lambda: keyroute.Pool().pick_many(None),  # type: ignore[arg-type]
        lambda: keyroute.group_by_slot("ab"),
    ],
)
def test_wrong_types_are_bad_type(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError) as info:
        call()
    assert isinstance(info.value, keyroute.BadTypeError)
    assert info.value.code == "BAD_TYPE"


def test_lone_surrogate_is_bad_utf8() -> None:
    for call in (
        lambda: Ring(["a"]).get("\udc80"),
        lambda: keyroute.key_slot("\udc80"),
        lambda: keyroute.key_slots(["ok", "\ud800x"]),
        lambda: keyroute.key_slots_array(("ok", "\ud800x")),
        lambda: Ring(["a"]).get_many(["\udc80"] * 300),
        lambda: Ring(["\udc80"]),
        lambda: Ring.from_spec("a,\udc80"),
        lambda: keyroute.hash_tag("{\udc80}"),
        lambda: keyroute.Pool(["\udc80"]),
        lambda: keyroute.SlotMap().add_master("\udc80", "h:1"),
    ):
        with pytest.raises(UnicodeError) as info:
            call()
        assert isinstance(info.value, keyroute.BadUtf8Error)
        assert info.value.code == "BAD_UTF8" and "surrogate" in str(info.value)


def test_get_many_accepts_iterables_and_is_stable_under_changes() -> None:
    ring = Ring({f"n{i}": 1 for i in range(8)})
    keys = [f"k{i}" for i in range(5000)]
    want = ring.get_many(keys)
    assert ring.get_many(tuple(keys)) == want
    assert ring.get_many(k for k in keys) == want
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            for i in range(50):
                ring.add(f"extra{i}")
                ring.remove(f"extra{i}")
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    t = threading.Thread(target=churn)
    t.start()
    for _ in range(50):
        got = ring.get_many(keys)
        assert all(g is not None for g in got)
    t.join()
    assert not errors
    assert ring.get_many(keys) == want


def test_get_many_indexes_is_an_int_array_of_get_many() -> None:
    import array

    ring = Ring({f"n{i}": 1 + i % 3 for i in range(9)})
    keys: list[str | bytes] = [f"k{i}" for i in range(5000)] + [b"", "\u00e9", b"\xff"]
    idx = ring.get_many_indexes(keys)
    assert isinstance(idx, array.array) and idx.typecode == "i"
    assert len(idx) == len(keys)
    assert [ring.nodes[i] for i in idx] == ring.get_many(keys)
    # An empty ring: -1 for every key; no keys: an empty array.
    assert list(Ring().get_many_indexes(["a", "b"])) == [-1, -1]
    assert len(ring.get_many_indexes([])) == 0
    with pytest.raises(TypeError):
        ring.get_many_indexes([1])


def test_changes_in_place_answer_as_a_fresh_ring() -> None:
    # With no reader holding the ring, add/remove/set_weight change it in place (one str
    # appended or dropped): after any sequence the names, weights and answers are those
    # of a ring built from scratch with the same nodes in the same order.
    import random

    rng = random.Random(7)
    ring = Ring({f"n{i}": 1 for i in range(20)})
    live = {f"n{i}": 1 for i in range(20)}
    keys = [f"k{i}" for i in range(2000)]
    for step in range(300):
        op = rng.randrange(3)
        if op == 0 or len(live) < 3:
            name = f"x{step}"
            w = rng.randrange(1, 4)
            ring.add(name, w)
            live[name] = w
        elif op == 1:
            name = rng.choice(list(live))
            ring.remove(name)
            del live[name]
        else:
            name = rng.choice(list(live))
            w = rng.randrange(1, 4)
            ring.set_weight(name, w)
            live[name] = w
        if step % 25 == 0:
            fresh = Ring(dict(live))
            assert ring.nodes == list(live)
            assert ring.get_many(keys) == fresh.get_many(keys)
    assert ring.nodes == list(live)
    assert [ring.weight(n) for n in live] == list(live.values())
    assert ring.get_many(keys) == Ring(dict(live)).get_many(keys)


def test_get_many_reads_every_kind_of_sequence_across_chunks() -> None:
    # More keys than one internal chunk (4096), mixing str, bytes and their subclasses;
    # lists and tuples are read by index, anything else through iteration.
    class S(str):
        pass

    class B(bytes):
        pass

    class L(list):  # type: ignore[type-arg]
        pass

    ring = Ring({f"n{i}": 1 + i % 3 for i in range(7)})
    keys: list[str | bytes] = []
    for i in range(9000):
        k = f"key:{i}:\u00e9" if i % 5 == 0 else f"key:{i}"
        keys.append([k, k.encode(), S(k), B(k.encode())][i % 4])
    want = [ring.get(k) for k in keys]
    assert ring.get_many(keys) == want
    assert ring.get_many(tuple(keys)) == want
    assert ring.get_many(L(keys)) == want
    assert ring.get_many(iter(keys)) == want
    assert ring.get_many(keys[:100]) == want[:100]  # below the GIL-release threshold
    slots = [keyroute.key_slot(k) for k in keys]
    assert keyroute.key_slots(keys) == slots
    assert keyroute.key_slots(tuple(keys)) == slots
    assert keyroute.key_slots(L(keys)) == slots
    assert keyroute.key_slots(iter(keys)) == slots
    for form in (keys, tuple(keys), L(keys), iter(keys)):
        got = keyroute.key_slots_array(form)
        assert got.typecode == "H" and got.tolist() == slots
    # A bad key after the first chunk: an error, whatever was looked up before it.
    with pytest.raises(TypeError, match="keys must be str or bytes, not int"):
        ring.get_many([*keys, 7])  # type: ignore[list-item]


def test_get_many_survives_a_list_shrinking_while_the_gil_is_released() -> None:
    # Between chunks the GIL is released; another thread emptying the list must not
    # crash or read freed keys: the keys copied so far are answered, the rest are gone.
    ring = Ring(["a", "b", "c"])
    errors: list[BaseException] = []
    for _ in range(20):
        keys = [f"k{i}".encode() for i in range(50_000)]
        stop = threading.Event()

        def shrink(keys: list[bytes] = keys, stop: threading.Event = stop) -> None:
            try:
                while keys and not stop.is_set():
                    del keys[len(keys) // 2 :]
            except BaseException as e:  # pragma: no cover
                errors.append(e)

        t = threading.Thread(target=shrink)
        t.start()
        got = ring.get_many(keys)
        stop.set()
        t.join()
        assert len(got) <= 50_000
        assert all(g in ("a", "b", "c") for g in got)
    assert not errors


def test_slots() -> None:
    assert keyroute.SLOT_COUNT == 16384
    assert keyroute.key_slot("123456789") == 0x31C3
    assert keyroute.key_slot(b"123456789") == 0x31C3
    cases = {"{}{a}": 13650, "{{a}}": 10276, "foo{}{bar}": 8363, "foo{bar}{zap}": 5061, "": 0}
    for k, s in cases.items():
        assert keyroute.key_slot(k) == s, k
    assert keyroute.key_slots(list(cases)) == list(cases.values())
    assert keyroute.key_slots([]) == []
    assert keyroute.key_slots_array(list(cases)).tolist() == list(cases.values())
    assert keyroute.key_slots_array([]).tolist() == []
    # Every length around the two-block register path (up to 32 bytes), braces anywhere.
    keys = [("ab{c}d" * 8)[i:j] for i in range(8) for j in range(i, 48)]
    want = [keyroute.key_slot(k) for k in keys]
    assert keyroute.key_slots(keys) == want
    assert keyroute.key_slots_array(keys).tolist() == want
    assert keyroute.hash_tag("{user:1}:cart") == "user:1"
    assert keyroute.hash_tag(b"{user:1}:cart") == b"user:1"
    assert keyroute.hash_tag(b"foo{}{bar}") == b"foo{}{bar}"
    assert keyroute.hash_tag("foo{}{bar}") == "foo{}{bar}"
    assert keyroute.hash_tag("{{a}}") == "{a"
    assert keyroute.hash_tag("{é}x") == "é" and keyroute.hash_tag("é".encode()) == "é".encode()
    assert keyroute.key_slot("{user:1}:cart") == keyroute.key_slot("user:1")


def test_pool() -> None:
    assert "ZRANGE" in keyroute.LEAST_USED_SCRIPT and "ZINCRBY" in keyroute.LEAST_USED_SCRIPT
    assert len(keyroute.LEAST_USED_SHA1) == 40
    pool = keyroute.Pool()
    assert pool.pick() is None and pool.pick_bytes() is None and pool.min_count() is None
    assert pool.pick_many(3) == [] and pool.pick_many_bytes(3) == []
    assert pool.seed(["proxy-b", b"proxy-a"]) == 2
    assert pool.pick() == "proxy-a"
    assert pool.pick_bytes() == b"proxy-b"
    assert pool.remove("proxy-a") == 1
    assert pool.remove("proxy-a") is None
    assert "proxy-a" not in pool and b"proxy-b" in pool and len(pool) == 1
    assert pool.removed_count("proxy-a") == 1
    assert pool.removed() == {"proxy-a": 1} and pool.removed_bytes() == {b"proxy-a": 1}
    assert pool.pick() == "proxy-b"
    assert pool.restore("proxy-a", "at_minimum") == 2
    assert pool.counts() == {"proxy-a": 2, "proxy-b": 2}
    assert pool.counts_bytes() == {b"proxy-a": 2, b"proxy-b": 2}
    assert pool.pick_many(3) == ["proxy-a", "proxy-b", "proxy-a"]
    assert pool.pick_many_bytes(1) == [b"proxy-b"]
    assert pool.count("nope") is None
    assert "2 members" in repr(pool)
    with pytest.raises(keyroute.PoolError) as mode:
        pool.restore("proxy-a", "zero")  # type: ignore[arg-type]
    assert mode.value.code == "BAD_RESTORE_MODE"
    for initial in (keyroute.MAX_EXACT_COUNT + 1, -1):
        with pytest.raises(keyroute.PoolError) as info:
            pool.seed(["x"], initial)
        assert info.value.code == "BAD_COUNT"
    p2 = keyroute.Pool(["b", "a"], initial=3)
    assert p2.counts() == {"a": 3, "b": 3}
    # A member that is not UTF-8: str results refuse it (counted), bytes ones do not.
    p3 = keyroute.Pool([b"\xff"])
    with pytest.raises(keyroute.BadUtf8Error) as bad:
        p3.pick()
    assert bad.value.code == "BAD_UTF8" and "pick_bytes" in str(bad.value)
    assert p3.pick_bytes() == b"\xff" and p3.counts_bytes() == {b"\xff": 2}
    with pytest.raises(keyroute.BadUtf8Error):
        p3.counts()


def test_scripts() -> None:
    names = [s.name for s in keyroute.SCRIPTS]
    assert names[:4] == ["least-used", "seed", "remove", "restore"]
    assert "lease-acquire" in names and len(names) == len(set(names))
    least = keyroute.SCRIPTS[0]
    assert least.text == keyroute.LEAST_USED_SCRIPT and least.sha1 == keyroute.LEAST_USED_SHA1
    assert least.num_keys == 1 and least.summary and "least-used" in repr(least)
