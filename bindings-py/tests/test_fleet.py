"""Every engine and fleet profile through keyroute.Router: every case of
tests/vectors/fleet/*.json (answers recorded from the real nginx, HAProxy, nutcracker,
spymemcached, Guava, redis-rb, Predis, pymemcache, groupcache, ...), built as
tests/vectors/fleet_routes.json says, and the entrance checks."""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

import pytest

import keyroute
from conftest import VECTORS, load

ROUTES: list[dict[str, Any]] = load(VECTORS / "fleet_routes.json")["routes"]


@cache
def fleet(file: str) -> Any:
    return load(VECTORS / "fleet" / file)


def build(route: dict[str, Any]) -> keyroute.Router:
    v = fleet(route["file"])
    if "config" in route:
        c = route["config"]
        return keyroute.Router.from_config(
            v["config_file"],
            c["pool"],
            file=route["file"],
            allow_down=c["allow_down"],
            resolved={h: n for h, n in c["resolved"]},
        )
    r = keyroute.Router(
        route["engine"],
        [(n, w) for n, w in route["nodes"]],
        {k: val for k, val in route["options"]},
    )
    for op in route.get("ops", []):
        if op[0] == "add":
            r.add(op[1], op[2])
        else:
            r.remove(op[1])
    return r


def test_every_vector_file_is_routed() -> None:
    files = {r["file"] for r in ROUTES}
    assert files == {p.name for p in (VECTORS / "fleet").glob("*.json")}


@pytest.mark.parametrize(
    "route", ROUTES, ids=lambda r: f"{r['file']}#{r['case']}-{r.get('engine', 'config')}"
)
def test_fleet_vector(route: dict[str, Any]) -> None:
    r = build(route)
    case = fleet(route["file"])["cases"][route["case"]]
    keys, expect = case["keys"], case["expect"]
    mode = route["expect"]
    if mode == "name":
        want = expect
    elif mode == "index":
        want = [r.nodes[i] for i in expect]
    else:
        j = mode["index_column"]
        want = [r.nodes[row[j]] for row in expect]
    assert [r.get(k) for k in keys] == want
    assert r.get_many(keys) == want
    assert [r.get(k.encode()) for k in keys[:20]] == want[:20]


def test_engines_and_candidates() -> None:
    assert "maglev" in keyroute.ENGINES and "jedis" in keyroute.Router.engines()
    # One name, one meaning: the alias builds the same engine, named twemproxy.
    r = keyroute.Router("nutcracker", ["10.0.0.1:11211", "10.0.0.2:11211"])
    assert r.engine == "twemproxy" and "nutcracker" not in keyroute.ENGINES
    nodes = ["a", "b", "c", "d"]
    for name in ("jump", "guava-jump", "rendezvous", "maglev", "nginx", "go-redis", "native"):
        r = keyroute.Router(name, nodes)
        assert r.engine == name and len(r) == 4 and r.nodes == nodes
        owner = r.get("user:1")
        cands = r.get_n("user:1", 10)
        assert cands[0] == owner and sorted(cands) == nodes
        assert r.get_index("user:1") == nodes.index(owner)
        assert r.format is None and r.servers is None
    m = keyroute.Router("maglev", {"a": 1, "b": 3}, {"table_size": 1009})
    counts = {n: 0 for n in m.nodes}
    for i in range(4000):
        counts[m.get(f"k{i}")] += 1
    assert counts["b"] > 2 * counts["a"]


def test_add_and_remove() -> None:
    # The reference Java ring: BB's removal takes Aa's points (same hashCode) with it.
    r = keyroute.Router("java-hashcode", [])
    for n in ("Aa", "BB", "cache3"):
        r.add(n)
    r.remove("BB")
    assert r.nodes == ["Aa", "cache3"] and len(r) == 2
    # Keys spread over the circle (String.hashCode of "k0", "k1", ... are neighbours).
    keys = [hashlib.sha1(b"%d" % i).hexdigest() for i in range(300)]
    assert set(r.get_many(keys)) == {"cache3"}
    built = keyroute.Router("java-hashcode", ["Aa", "cache3"])
    assert "Aa" in built.get_many(keys)
    # Elsewhere: what a build over the new list gives, options kept.
    m = keyroute.Router("maglev", {"a": 1, "b": 2}, {"table_size": 1009})
    m.add("c", 3)
    m.remove("a")
    want = keyroute.Router("maglev", {"b": 2, "c": 3}, {"table_size": 1009})
    assert m.nodes == ["b", "c"] and m.get_many(keys) == want.get_many(keys)
    # node=prefix: names shown before the first '-', changed by their own names.
    p = keyroute.Router("java-hashcode", ["redis-1", "redis-2"], {"node": "prefix"})
    assert p.nodes == ["redis", "redis"] and set(p.get_many(keys)) == {"redis"}
    p.remove("redis-2")
    assert p.nodes == ["redis"]
    with pytest.raises(keyroute.NodeNotFoundError) as e:
        p.remove("redis")
    assert code(e) == "UNKNOWN_NODE"
    with pytest.raises(keyroute.RingError) as e:
        m.add("b")
    assert code(e) == "DUPLICATE_NODE"
    with pytest.raises(keyroute.RingError) as e:
        r.add("x", 2)
    assert code(e) == "BAD_OPTION"
    with pytest.raises(keyroute.RingError) as e:
        m.add("x", 0)
    assert code(e) == "ZERO_WEIGHT"
    with pytest.raises(keyroute.BadTypeError):
        m.add(b"x")
    cfg = keyroute.Router.from_config(
        "backend app\n    balance uri\n    hash-type consistent\n    server w1 10.0.0.1:80\n"
    )
    with pytest.raises(keyroute.RingError) as e:
        cfg.add("w2")
    assert code(e) == "UNSUPPORTED_CONFIG" and cfg.nodes == ["w1"]


def test_from_config() -> None:
    text = (
        "backend app\n    balance uri\n    hash-type consistent\n"
        "    server web1 10.0.0.1:80\n    server web2 10.0.0.2:80 weight 2\n"
    )
    r = keyroute.Router.from_config(text, file="haproxy.cfg")
    assert (r.format, r.pool, r.key, r.engine) == ("haproxy", "app", "uri", "haproxy")
    assert r.servers == [("web1", "10.0.0.1:80", 1, 4), ("web2", "10.0.0.2:80", 2, 5)]
    assert r.get("/index.html") in ("web1", "web2")
    nginx = "http {\n upstream u {\n  hash $uri consistent;\n  include more.conf;\n }\n}\n"
    r = keyroute.Router.from_config(nginx, "u", includes={"more.conf": "server 10.0.0.9:80;\n"})
    assert r.nodes == ["10.0.0.9:80"]


def code(exc: pytest.ExceptionInfo[BaseException]) -> str:
    c = getattr(exc.value, "code", None)
    assert isinstance(c, str)
    return c


def test_refusals_carry_codes() -> None:
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router.from_config(
            "backend app\n    balance uri\n    hash-type consistent\n"
            "    server s1 10.0.0.1:80 backup\n",
            file="h.cfg",
        )
    assert code(e) == "UNSUPPORTED_CONFIG" and "h.cfg:4:" in str(e.value)
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router.from_config("http {\n upstream u {\n  server a:1;\n", "u")
    assert code(e) == "BAD_CONFIG"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router.from_config(
            "http {\n upstream u {\n  hash $uri consistent;\n  include x.conf;\n }\n}\n",
            file="n.conf",
        )
    assert code(e) == "UNSUPPORTED_CONFIG" and "n.conf:4:" in str(e.value)
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router.from_config("http { }\n", file="n.conf")
    assert code(e) == "BAD_CONFIG"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("nope", ["a"])
    assert code(e) == "UNKNOWN_PROFILE"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("maglev", ["a"], {"table_size": 100})
    assert code(e) == "BAD_OPTION"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("jump", ["a"], {"colour": "red"})
    assert code(e) == "BAD_OPTION"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("jump", ["a", "a"])
    assert code(e) == "DUPLICATE_NODE"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("rendezvous", [("a", 0)])
    assert code(e) == "ZERO_WEIGHT"
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Router("rendezvous", [("a", 1.5)])
    assert code(e) == "BAD_WEIGHT"
    with pytest.raises(keyroute.BadTypeError) as e:
        keyroute.Router("jump", "a,b")
    assert code(e) == "BAD_TYPE"
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Router("jump", ["a"], {"hash": 1.5})
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Router("jump", ["a"], "hash=xxh64")
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Router.from_config(b"backend x")  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadUtf8Error):
        keyroute.Router("jump", ["a\udc80"])
    with pytest.raises(keyroute.OutOfRangeError):
        keyroute.Router("maglev", ["a"], {"table_size": 10**40})
    with pytest.raises(keyroute.TooLargeError):
        keyroute.Router("jump", ["a"], {f"o{i}": "1" for i in range(100)})
    r = keyroute.Router("jump", ["a"])
    with pytest.raises(keyroute.BadTypeError):
        r.get(1)  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadUtf8Error):
        r.get("\udc80")
    with pytest.raises(keyroute.OutOfRangeError):
        r.get_n("k", -1)
    with pytest.raises(keyroute.OutOfRangeError):
        keyroute.Router.from_config("x", resolved={"h": "-1"})


def test_bounded_loads_never_above_the_cap() -> None:
    r = keyroute.Router("native", ["a", "b", "c", "d"])
    b = keyroute.Bounded(r, 1.25)
    owners = {}
    for i in range(400):
        owners[f"job-{i}"] = b.assign(f"job-{i}")
        assert all(load <= b.cap for _, load in b.loads)
    assert b.assigned == 400 and b.cap == 125
    assert b.assign("job-7") == owners["job-7"] == b.owner_of("job-7")
    moved_total = 0
    for i in range(0, 400, 3):
        moved = b.release(f"job-{i}")
        assert moved is not None
        moved_total += len(moved)
        for key, src, dst in moved:
            assert isinstance(key, bytes) and src != dst and b.owner_of(key) == dst
        assert all(load <= b.cap for _, load in b.loads)
    assert b.release("job-0") is None and b.owner_of("job-0") is None
    assert sum(load for _, load in b.loads) == b.assigned
    with pytest.raises(keyroute.RingError) as e:
        keyroute.Bounded(r, 0.5)
    assert code(e) == "BAD_OPTION"
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Bounded(r, "1.5")  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadTypeError):
        keyroute.Bounded(["a"], 1.5)  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadTypeError):
        b.assign(3)  # type: ignore[arg-type]
