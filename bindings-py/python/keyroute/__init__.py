"""keyroute: which node owns this key, which proxy gets the next job.

One Rust core gives the same answers in Rust, Python, JavaScript and C:

* :class:`Ring` -- consistent-hash rings, bit-exact with the ketama family
  (``"libketama"``, ``"libmemcached"``, ``"twemproxy"``, ``"uhashring"``,
  ``"node-hashring"``, ``"hash_ring"``) plus keyroute's fast ``"native"`` profile.
* :func:`key_slot`, :func:`key_slots`, :func:`hash_tag` -- Redis Cluster hash slots.
* :class:`SlotMap` -- the slot map with MOVED/ASK handling; :func:`group_by_slot`.
* :class:`Pool` and :data:`LEAST_USED_SCRIPT` -- least-used selection (the in-memory
  model of the Redis script).
* :class:`LeastUsed` and :class:`Leases` -- least-used and least-concurrency selection on
  a real Redis server (the core's native client; errors are :class:`RedisError`).

Keys are ``str`` (hashed as UTF-8) or ``bytes`` (hashed as is).
"""

from keyroute._keyroute import (
    DEFAULT_NATIVE_VNODES as DEFAULT_NATIVE_VNODES,
    LEAST_USED_SCRIPT as LEAST_USED_SCRIPT,
    LEAST_USED_SHA1 as LEAST_USED_SHA1,
    MAX_EXACT_COUNT as MAX_EXACT_COUNT,
    PROFILES as PROFILES,
    REMOVE_SCRIPT as REMOVE_SCRIPT,
    REMOVE_SHA1 as REMOVE_SHA1,
    RESTORE_SCRIPT as RESTORE_SCRIPT,
    RESTORE_SHA1 as RESTORE_SHA1,
    SEED_SCRIPT as SEED_SCRIPT,
    SEED_SHA1 as SEED_SHA1,
    SLOT_COUNT as SLOT_COUNT,
    KeyrouteError as KeyrouteError,
    Lease as Lease,
    LeastUsed as LeastUsed,
    Leases as Leases,
    MovedArc as MovedArc,
    NodeNotFoundError as NodeNotFoundError,
    Pool as Pool,
    PoolError as PoolError,
    RedirectError as RedirectError,
    RedisError as RedisError,
    Ring as Ring,
    RingDiff as RingDiff,
    RingError as RingError,
    SlotMap as SlotMap,
    SlotMapError as SlotMapError,
    __version__ as __version__,
    group_by_slot as group_by_slot,
    hash_tag as hash_tag,
    key_slot as key_slot,
    key_slots as key_slots,
)

__all__ = [
    "DEFAULT_NATIVE_VNODES",
    "LEAST_USED_SCRIPT",
    "LEAST_USED_SHA1",
    "MAX_EXACT_COUNT",
    "PROFILES",
    "REMOVE_SCRIPT",
    "REMOVE_SHA1",
    "RESTORE_SCRIPT",
    "RESTORE_SHA1",
    "SEED_SCRIPT",
    "SEED_SHA1",
    "SLOT_COUNT",
    "KeyrouteError",
    "Lease",
    "LeastUsed",
    "Leases",
    "MovedArc",
    "NodeNotFoundError",
    "Pool",
    "PoolError",
    "RedirectError",
    "RedisError",
    "Ring",
    "RingDiff",
    "RingError",
    "SlotMap",
    "SlotMapError",
    "__version__",
    "group_by_slot",
    "hash_tag",
    "key_slot",
    "key_slots",
]
