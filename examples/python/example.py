"""A tour of the keyroute Python package.

    pip install ./bindings-py && python examples/python/example.py
"""

import keyroute

# A memcached fleet routed exactly like libketama clients route it.
fleet = keyroute.Ring(
    {"127.0.0.1:11211": 600, "127.0.0.1:11212": 400}, profile="libketama"
)
print(fleet)
print("test ->", fleet.get("test"))  # 127.0.0.1:11211, as libketama answers

# keyroute's own ring for new fleets: fast, 64-bit, deterministic everywhere.
ring = keyroute.Ring(["cache-a", "cache-b", "cache-c"])
print("user:42 ->", ring.get("user:42"), "replicas:", ring.get_n("user:42", 2))
owners = ring.get_many([f"user:{i}" for i in range(10_000)])  # one call, GIL released
print("per node:", {n: owners.count(n) for n in ring})
print("shares:", {n: round(s, 4) for n, s in ring.shares().items()})

# Adding a node: what moves?
bigger = ring.copy()
bigger.add("cache-d")
d = ring.diff(bigger)
print(f"adding cache-d moves {d.moved_fraction:.1%} of keys (ideal {d.ideal_fraction:.1%})")

# Errors are Pythonic, and carry the code every language shows (keyroute.ERROR_CODES).
try:
    ring.remove("cache-z")
except KeyError as e:
    print("KeyError:", e)
try:
    keyroute.Ring({"a": 0})
except keyroute.RingError as e:  # also a ValueError
    print(f"ValueError [{e.code}]:", e)

# Node lists as people write them: host:port keeps its port.
print(keyroute.parse_nodes("10.0.0.1:11211, 10.0.0.2:11211=2"))

# Redis Cluster slots, as CLUSTER KEYSLOT answers.
print("slot of {user:1}:cart =", keyroute.key_slot("{user:1}:cart"))
print("slots:", keyroute.key_slots([b"foo", b"bar", "baz"]))
slots = keyroute.SlotMap()
a = slots.add_master("a", "127.0.0.1:7000")
b = slots.add_master("b", "127.0.0.1:7001")
slots.assign(0, 8191, a)
slots.assign(8192, 16383, b)
print("foo lives on", slots.address_for_key("foo"))
print("after MOVED:", slots.apply_redirect("MOVED 12182 127.0.0.1:7000", "127.0.0.1"))

# Least-used selection: the in-memory model of the Redis script.
pool = keyroute.Pool(["proxy-1", "proxy-2"])
proxy = pool.pick()
if proxy is None:  # empty pool: make no request
    raise SystemExit("no proxy available")
print("picked", proxy, "counts:", pool.counts())  # str members; pick_bytes() for bytes
print("script:", keyroute.LEAST_USED_SCRIPT.strip().splitlines()[0], "...")
