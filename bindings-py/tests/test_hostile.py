"""Hostile input, randomised (issue 18): hypothesis feeds every public function, class
and method of ``keyroute`` random nested types, sizes, numbers at the edges (+-2^31, 2^32,
2^53, 2^63, 2^64, NaN, +-Infinity), lone surrogates and bytes that are not UTF-8.

The callables are enumerated from the module (``keyroute.__all__``, then every public
method and property of every class, dunders that take an argument included); a class that
has no factory below is still fed through its constructor. Half of the examples start
from a valid call of the callable and replace one argument with a hostile value, so the
checks behind the first one are reached too.

Expected of every call whose arguments fit the signature: a value, or a
:class:`keyroute.KeyrouteError` whose ``.code`` is in ``ERROR_CODES`` and is not
``INTERNAL``; never another exception (pyo3's PanicException included), a crash, a hang
(faulthandler ends the process after HANG_SECONDS) or unbounded memory (the peak RSS may
grow by at most RSS_BUDGET over the module). A call that does not fit the signature
(arity, unknown keyword) is Python's own TypeError. The examples run per callable are
written to build/hostile-py.txt and printed at the end.

Redis-backed classes talk to a throwaway redis-server (tests/test_redis.py starts it);
the only other URLs drawn are 127.0.0.1:1 and texts that are not URLs, so nothing is
looked up or sent off the machine.
"""

from __future__ import annotations

import collections
import faulthandler
import inspect
import itertools
import math
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyroute
from test_redis import Server, start_server

EXAMPLES = int(os.environ.get("KEYROUTE_HOSTILE_EXAMPLES", "100"))
HANG_SECONDS = 60
RSS_BUDGET = 512 << 20
REPORT = Path(__file__).resolve().parents[2] / "build" / "hostile-py.txt"

EDGE_INTS = [
    0, 1, -1, 2, 7,
    2**31 - 1, -(2**31), 2**31, 2**32 - 1, 2**32, 2**32 + 160,
    2**53, 2**53 + 1, -(2**53), 2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**64, -(2**64),
    10**30, -(10**30), 10**300,
]
EDGE_FLOATS = [
    math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, 1.0, 1e300, -1e300, 2.0**53,
    2.0**63, 2.0**64, 5e-324, -1.5,
]
LONE_SURROGATES = ["\ud800", "a\udfffb", "\udc00{a}", "node\ud83d", "\ud800:6379"]
NOT_UTF8 = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"a\xfe{b}", b"\xf4\x90\x80\x80"]
WORDS = [
    "", "a", "b", "native", "libketama", "libmemcached", "twemproxy", "uhashring",
    "node-hashring", "hash_ring", "10.0.0.1:11211", "10.0.0.1:11211=2", "a:2", "a=0",
    "{a}", "{", "}", "keep", "at_minimum", "master", "replica", "online", "failed",
    "MOVED 42 10.0.0.1:7001", "ASK 1 :7000", "a,b=2,c", "x" * 5000, "é", "\x00",
]


class LyingLength:
    """An iterable whose __len__ claims far more items than it yields."""

    def __init__(self, claimed: int) -> None:
        self.claimed = claimed

    def __len__(self) -> int:
        return self.claimed

    def __iter__(self) -> Iterator[bytes]:
        return iter([b"a", b"b"])

    def __repr__(self) -> str:
        return f"LyingLength({self.claimed})"


class Raising:
    """Raises from every protocol a binding might call."""

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("__iter__ raised")

    def __len__(self) -> int:
        raise RuntimeError("__len__ raised")

    def __index__(self) -> int:
        raise RuntimeError("__index__ raised")

    def __str__(self) -> str:
        raise RuntimeError("__str__ raised")

    def __repr__(self) -> str:
        return "Raising()"


class HugeIndex:
    def __index__(self) -> int:
        return 2**80

    def __repr__(self) -> str:
        return "HugeIndex()"


class IntSub(int):
    pass


class StrSub(str):
    pass


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(EDGE_INTS),
        st.integers(),
        st.sampled_from(EDGE_FLOATS),
        st.floats(),
        st.sampled_from(WORDS),
        st.text(max_size=20),
        st.sampled_from(LONE_SURROGATES),
        st.binary(max_size=20),
        st.sampled_from(NOT_UTF8),
        st.none(),
        st.booleans(),
        st.sampled_from([IntSub(3), StrSub("a"), bytearray(b"ab"), memoryview(b"ab"), 1 + 2j]),
        st.builds(LyingLength, st.sampled_from([2**31, 2**40, sys.maxsize])),
        st.just(Raising()),
        st.just(HugeIndex()),
        st.just(object()),
    )


def values() -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=6),
            st.tuples(inner, inner),
            st.tuples(inner, inner, inner),
            st.dictionaries(st.one_of(st.text(max_size=4), st.integers(-3, 3)), inner, max_size=4),
            st.sets(st.one_of(st.integers(), st.text(max_size=4)), max_size=4),
        ),
        max_leaves=12,
    )


def many_keys() -> st.SearchStrategy[Any]:
    """A long list (sizes), drawn now and then."""
    return st.lists(st.binary(max_size=8), min_size=100, max_size=400)


SCALARS = scalars()
VALUES = values()
# Mostly single values (so checks past the type check are reached), then nested ones,
# now and then a long list.
ARGUMENTS = st.one_of(SCALARS, SCALARS, SCALARS, VALUES, VALUES, many_keys())


# ---------------------------------------------------------------------------------------
# Instances and valid baseline calls.


def _ring() -> keyroute.Ring:
    return keyroute.Ring(["a", "b", "c"])


def _map() -> keyroute.SlotMap:
    m = keyroute.SlotMap()
    a = m.add_master("a", "10.0.0.1:7000")
    b = m.add_master("b", "10.0.0.2:7000")
    m.assign(0, 9000, a)
    m.assign(9001, 16383, b)
    return m


def _pool() -> keyroute.Pool:
    return keyroute.Pool(["x", "y"])


SERVER: Server | None = None


def _url() -> str:
    assert SERVER is not None
    return SERVER.url


FACTORIES: dict[str, Callable[[], Any]] = {
    "Ring": _ring,
    "SlotMap": _map,
    "Plan": lambda: keyroute.Plan(_map(), {0: 1, 1: 1}),
    "Pool": _pool,
    "Lease": lambda: keyroute.Lease(b"x", 1, 2),
    "LeastUsed": lambda: keyroute.LeastUsed(_url(), "{hostile}:pool", timeout=1.0),
    "Leases": lambda: keyroute.Leases(_url(), "{hostile}:leases", timeout=1.0),
    "RingDiff": lambda: _ring().diff(keyroute.Ring(["a", "b"])),
    "MovedArc": lambda: _ring().diff(keyroute.Ring(["a", "b"])).moved[0],
    "Script": lambda: keyroute.SCRIPTS[0],
}

# A valid call per callable: (args, kwargs). Hostile examples replace one of them.
BASELINES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "parse_nodes": (("a,b=2",), {}),
    "parse_weights": (("a=1,b=0",), {}),
    "key_slot": ((b"foo",), {}),
    "key_slots": (([b"a", "b"],), {}),
    "key_slots_array": (([b"a", "b"],), {}),
    "hash_tag": (("{a}b",), {}),
    "group_by_slot": ((["a", "{a}b"],), {}),
    "parse_redirect": (("MOVED 1 10.0.0.1:7000",), {}),
    "Ring": ((["a", "b"],), {"profile": "native"}),
    "Ring.from_spec": (("a,b=2",), {"profile": "libketama"}),
    "Ring.get": ((b"k",), {}),
    "Ring.get_n": ((b"k", 2), {}),
    "Ring.get_many": (([b"k", "j"],), {}),
    "Ring.add": (("d", 1), {}),
    "Ring.remove": (("a",), {}),
    "Ring.set_weight": (("a", 2), {}),
    "Ring.weight": (("a",), {}),
    "Ring.diff": ((keyroute.Ring(["a"]),), {}),
    "Ring.__contains__": (("a",), {}),
    "SlotMap.from_slots": (([[0, 16383, ["10.0.0.1", 7000, "id1"]]],), {}),
    "SlotMap.from_shards": (
        ([{"slots": [0, 16383], "nodes": [{"id": "a", "port": 7000, "ip": "10.0.0.1",
                                            "endpoint": "10.0.0.1", "role": "master",
                                            "replication-offset": 0, "health": "online"}]}],),
        {},
    ),
    "SlotMap.add_master": (("z", "10.0.0.9:7000"), {}),
    "SlotMap.add_replica": ((0, "r", "10.0.0.8:7000"), {}),
    "SlotMap.assign": ((0, 10, 1), {}),
    "SlotMap.unassign": ((0, 10), {}),
    "SlotMap.set_health": ((0, "failed"), {}),
    "SlotMap.owner": ((5,), {}),
    "SlotMap.owner_of_key": ((b"k",), {}),
    "SlotMap.address_for_slot": ((5,), {}),
    "SlotMap.address_for_key": (("k",), {}),
    "SlotMap.node": ((0,), {}),
    "SlotMap.find_id": (("a",), {}),
    "SlotMap.find_address": (("10.0.0.1:7000",), {}),
    "SlotMap.apply_redirect": (("MOVED 1 :7001", "10.0.0.1"), {}),
    "SlotMap.group_by_node": ((["a", "b"],), {}),
    "SlotMap.__getitem__": ((0,), {}),
    "Plan": ((_map(), {0: 1, 1: 2}), {}),
    "Plan.apply": ((_map(),), {}),
    "Pool": ((["a", "b"],), {"initial": 0}),
    "Pool.seed": ((["z"],), {"initial": 1, "overwrite": False}),
    "Pool.pick_many": ((3,), {}),
    "Pool.pick_many_bytes": ((3,), {}),
    "Pool.remove": (("x",), {}),
    "Pool.restore": (("x",), {"mode": "keep"}),
    "Pool.count": (("x",), {}),
    "Pool.removed_count": (("x",), {}),
    "Pool.__contains__": (("x",), {}),
    "Lease": ((b"x", 1, 2), {}),
    "LeastUsed": (("URL", "{h}:p"), {"timeout": 1.0}),
    "LeastUsed.seed": ((["x", "y"],), {"initial": 0}),
    "LeastUsed.pick_many": ((3,), {}),
    "LeastUsed.pick_many_bytes": ((3,), {}),
    "LeastUsed.remove": (("x",), {}),
    "LeastUsed.restore": (("x",), {"mode": "at_minimum"}),
    "Leases": (("URL", "{h}:l"), {"timeout": 1.0}),
    "Leases.seed": ((["x"],), {}),
    "Leases.remove": (("x",), {}),
    "Leases.acquire": ((1.0,), {}),
    "Leases.release": ((keyroute.Lease(b"x", 1, 2),), {}),
    "Leases.reclaim": ((), {"now_ms": 5}),
}

# URL parameters: never a host name (it would be looked up).
SAFE_URLS = ["redis://127.0.0.1:1/0", "127.0.0.1:1", "", "redis://", "::::", "\ud800",
             b"redis://127.0.0.1:1", None, 7, "unix:///nope", "redis://127.0.0.1:99999"]
URL_CALLABLES = {"LeastUsed", "Leases"}


def _public(cls: type) -> list[str]:
    names = [n for n in dir(cls) if not n.startswith("_")]
    # Dunders that take an argument from the caller.
    names += [n for n in ("__contains__", "__getitem__", "__eq__") if n in cls.__dict__]
    return sorted(set(names))


def enumerate_callables() -> list[str]:
    """Every public function, class and method (as "Class.method") of keyroute."""
    out = []
    for name in keyroute.__all__:
        obj = getattr(keyroute, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            continue
        if isinstance(obj, type):
            out.append(name)
            for attr in _public(obj):
                member = inspect.getattr_static(obj, attr)
                if isinstance(member, property) or type(member).__name__ == "getset_descriptor":
                    out.append(f"{name}.{attr}")  # read, with no argument
                elif callable(member) or isinstance(member, (classmethod, staticmethod)):
                    out.append(f"{name}.{attr}")
        elif callable(obj):
            out.append(name)
    return out


CALLABLES = enumerate_callables()
COUNTS: collections.Counter[str] = collections.Counter()
OUTCOMES: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)


@pytest.fixture(scope="module", autouse=True)
def _server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    global SERVER
    SERVER = start_server(tmp_path_factory.mktemp("hostile-redis"))
    faulthandler.dump_traceback_later(HANG_SECONDS * 20, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
    SERVER.stop()
    SERVER = None


RSS_START = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def resolve(name: str) -> tuple[Callable[..., Any], inspect.Signature | None]:
    """The callable behind `name` (a bound method of a fresh instance for "Class.attr")."""
    if "." not in name:
        obj = getattr(keyroute, name)
    else:
        cls_name, attr = name.split(".")
        cls = getattr(keyroute, cls_name)
        static = inspect.getattr_static(cls, attr)
        if isinstance(static, classmethod) or type(static).__name__ == "classmethod_descriptor":
            obj = getattr(cls, attr)
        else:
            factory = FACTORIES.get(cls_name)
            if factory is None:
                pytest.skip(f"no factory for {cls_name}: its constructor is fed instead")
            instance = factory()
            obj = getattr(type(instance), attr)
            if isinstance(obj, property) or type(obj).__name__ == "getset_descriptor":
                return (lambda: getattr(instance, attr)), inspect.Signature()
            obj = getattr(instance, attr)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    return obj, sig


def fits(sig: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if sig is None:
        return True
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def check_call(name: str, fn: Callable[..., Any], sig: inspect.Signature | None,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    COUNTS[name] += 1
    fitting = fits(sig, args, kwargs)
    start = time.monotonic()
    try:
        fn(*args, **kwargs)
        OUTCOMES[name]["ok"] += 1
    except keyroute.KeyrouteError as e:
        code = getattr(e, "code", None)
        assert code in keyroute.ERROR_CODES, f"{name}{args!r}{kwargs!r}: code {code!r}"
        assert code != "INTERNAL", f"{name}{args!r}{kwargs!r}: INTERNAL: {e}"
        OUTCOMES[name][code] += 1
    except TypeError as e:
        if "." not in name and "cannot create" in str(e):
            # A class Python code cannot instantiate (results such as MovedArc).
            OUTCOMES[name]["not constructible"] += 1
            return
        if fitting:
            raise AssertionError(
                f"{name}{args!r}{kwargs!r}: plain TypeError, not a KeyrouteError: {e}"
            ) from e
        OUTCOMES[name]["signature"] += 1
    except BaseException as e:  # PanicException derives from BaseException
        raise AssertionError(
            f"{name}{args!r}{kwargs!r}: {type(e).__module__}.{type(e).__name__}: {e}"
        ) from e
    elapsed = time.monotonic() - start
    assert elapsed < HANG_SECONDS, f"{name}{args!r}: {elapsed:.1f} s"


def param_names(sig: inspect.Signature | None) -> list[str]:
    if sig is None:
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]


@st.composite
def hostile_call(draw: st.DrawFn, name: str, sig: inspect.Signature | None
                 ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    base = BASELINES.get(name)
    url_value = st.sampled_from(SAFE_URLS) | st.just(_url())
    if base is not None and draw(st.booleans()):
        args, kwargs = list(base[0]), dict(base[1])
        args = [_url() if a == "URL" else a for a in args]
        slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
        if slots:
            kind, where = draw(st.sampled_from(slots))
            replacement = draw(url_value if name in URL_CALLABLES and where == 0 else ARGUMENTS)
            if kind == "a":
                args[where] = replacement  # type: ignore[index]
            else:
                kwargs[where] = replacement  # type: ignore[index]
        return tuple(args), kwargs
    names = param_names(sig)
    n = draw(st.integers(0, max(len(names), 1) + 1))
    args = []
    for i in range(n):
        if name in URL_CALLABLES and i == 0:
            args.append(draw(url_value))
        else:
            args.append(draw(ARGUMENTS))
    kwargs = {}
    for p in names[n:]:
        if draw(st.booleans()):
            kwargs[p] = draw(ARGUMENTS)
    return tuple(args), kwargs


@pytest.mark.parametrize("name", CALLABLES)
def test_hostile_input(name: str) -> None:
    fn, sig = resolve(name)
    # Properties and calls without parameters: a few examples are enough (extra arguments
    # only meet Python's own arity check).
    examples = EXAMPLES if param_names(sig) or "." not in name else max(EXAMPLES // 10, 5)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        f, s = fn, sig
        if "." in name and not name.split(".")[1].startswith(("from_",)):
            # A fresh instance now and then, so earlier calls do not pile up state.
            if COUNTS[name] % 25 == 0:
                f, s = resolve(name)
        args, kwargs = data.draw(hostile_call(name, s))
        check_call(name, f, s, args, kwargs)

    run()


# The binding must not believe a caller's length: iterables that claim 2^62 items, or
# never end, are read as items arrive and refused past the stated limit (TOO_LARGE),
# within bounded time and memory.
ENDLESS = [
    ("key_slots", lambda it: keyroute.key_slots(it)),
    ("key_slots_array", lambda it: keyroute.key_slots_array(it)),
    ("group_by_slot", lambda it: keyroute.group_by_slot(it)),
    ("Ring.get_many", lambda it: _ring().get_many(it)),
    ("SlotMap.group_by_node", lambda it: _map().group_by_node(it)),
    ("Pool", lambda it: keyroute.Pool(it)),
]


PEAK_BEFORE_ENDLESS: list[int] = []


@pytest.mark.parametrize("name,call", ENDLESS, ids=[n for n, _ in ENDLESS])
def test_lying_and_endless_iterables(name: str, call: Callable[[Any], Any]) -> None:
    if not PEAK_BEFORE_ENDLESS:
        PEAK_BEFORE_ENDLESS.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    try:
        call(LyingLength(2**62))  # two items, whatever __len__ says
    except keyroute.KeyrouteError as e:
        assert e.code in keyroute.ERROR_CODES and e.code != "INTERNAL"
    start = time.monotonic()
    counter = itertools.count()
    endless = (b"k%d" % next(counter) for _ in itertools.repeat(None))
    with pytest.raises(keyroute.TooLargeError) as info:
        call(endless)
    assert info.value.code == "TOO_LARGE"
    elapsed = time.monotonic() - start
    assert elapsed < HANG_SECONDS, f"{name}: {elapsed:.1f} s to refuse an endless iterable"
    COUNTS[f"{name} (endless)"] += 1


def test_zz_budget_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    # The budget holds for the hostile examples; the endless iterables (2^24 keys read
    # before the refusal) are reported, not budgeted: their memory is the keys given.
    end = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    peak = PEAK_BEFORE_ENDLESS[0] if PEAK_BEFORE_ENDLESS else end
    lines = [f"{'callable':34} {'examples':>8}  outcomes"]
    for name in sorted(COUNTS):
        outcomes = " ".join(f"{k}:{v}" for k, v in sorted(OUTCOMES[name].items()))
        lines.append(f"{name:34} {COUNTS[name]:8}  {outcomes}")
    lines.append(f"{len(COUNTS)} callables, {sum(COUNTS.values())} examples; peak RSS grew "
                 f"{(peak - RSS_START) >> 20} MiB (then {(end - RSS_START) >> 20} MiB with the "
                 "endless iterables)")
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text("\n".join(lines) + "\n")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert peak - RSS_START < RSS_BUDGET, f"peak RSS grew {(peak - RSS_START) >> 20} MiB"
