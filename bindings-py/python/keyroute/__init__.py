"""keyroute: which node owns this key, which proxy gets the next job.

One Rust core gives the same answers in Rust, Python, JavaScript and C:

* :class:`Ring` -- consistent-hash rings, bit-exact with the ketama family
  (``"libketama"``, ``"libmemcached"``, ``"uhashring"``, ``"node-hashring"``,
  ``"hash_ring"``) plus keyroute's fast ``"native"`` profile (``"twemproxy"`` is the old
  name of ``"libmemcached"``; :class:`Router` ``"twemproxy"`` is nutcracker's own rules);
  :func:`parse_nodes` reads node lists (``host:port`` keeps its port).
* :func:`key_slot`, :func:`key_slots` (:func:`key_slots_array`: an ``array('H')``),
  :func:`hash_tag` -- Redis Cluster hash slots.
* :class:`SlotMap` -- the slot map (from CLUSTER SHARDS/SLOTS or a redis-py client) with
  MOVED/ASK handling; :class:`Plan` -- resharding plans; :func:`group_by_slot`.
* :class:`Pool` and :data:`SCRIPTS` -- least-used selection (the in-memory model of the
  Redis scripts, and the scripts themselves).
* :class:`Affinity` -- affinity with a cap (bounded-load consistent hashing) on Redis;
* :class:`LeastUsed` and :class:`Leases` -- least-used and least-concurrency selection on
  a real Redis server (the core's native client; errors are :class:`RedisError`).
* :class:`SmartCache`, :class:`Sessions`, :class:`Devices` -- the smart cache on Redis
  (standalone or Cluster): a cold key loaded once across every process and server,
  sessions any server reads, warm-up by device (errors: :class:`CacheTimeout`,
  :class:`BackendError`, :class:`SessionExpired`, :class:`SessionVersionMismatch`,
  :class:`CacheInputError`).

Keys are ``str`` (hashed as UTF-8) or ``bytes`` (hashed as is). Every exception keyroute
raises is a :class:`KeyrouteError` with ``.code``, one of :data:`ERROR_CODES`.
"""

# Every public name of the native module: its __all__ lists what it registers (pyo3's
# add_function, add_class, add), and _keyroute.pyi declares each (mypy.stubtest checks
# that the two lists agree). A name the native module adds needs no line here.
from keyroute._keyroute import *  # noqa: F403
from keyroute._keyroute import __all__ as __all__
