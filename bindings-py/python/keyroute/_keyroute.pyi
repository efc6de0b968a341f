"""Type stubs of the native module keyroute._keyroute (checked by mypy.stubtest)."""

import builtins

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, final, overload

from typing_extensions import Self, TypeAlias

_Key: TypeAlias = str | bytes
_NodeSpec: TypeAlias = (
    Mapping[str, int] | Iterable[str | tuple[str, int] | list[str | int]]
)
_Address: TypeAlias = str | tuple[str, int]

# BEGIN GENERATED: engine and profile names from core's registry (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
_ProfileName: TypeAlias = Literal[
    "native", "libketama", "libmemcached", "uhashring", "node-hashring", "hash_ring",
]
_EngineName: TypeAlias = Literal[
    "jump", "guava-jump", "rendezvous", "maglev", "nginx", "nginx-hash", "haproxy",
    "haproxy-map", "twemproxy", "java-hashcode", "spymemcached", "spymemcached-weighted",
    "jedis", "envoy-ring", "envoy-maglev", "go-redis", "groupcache", "dubbo", "redis-rb",
    "predis", "predis-ketama", "pymemcache", "native", "libketama", "libmemcached", "uhashring",
    "node-hashring", "hash_ring",
]
# END GENERATED

# BEGIN GENERATED: error codes from core's ErrorCode (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
_ErrorCode: TypeAlias = Literal[
    "NULL_ARGUMENT", "BAD_UTF8", "BAD_TYPE", "OUT_OF_RANGE", "TOO_LARGE", "BUFFER_TOO_SMALL",
    "INVALID_HANDLE", "INTERNAL", "EMPTY_NODE_NAME", "ZERO_WEIGHT", "NEGATIVE_WEIGHT",
    "WEIGHT_TOO_LARGE", "BAD_WEIGHT", "DUPLICATE_NODE", "UNKNOWN_NODE", "UNKNOWN_PROFILE",
    "TOO_MANY_POINTS", "BAD_VNODES", "BAD_POINTS_PER_DIGEST", "BAD_OPTION",
    "INCOMPATIBLE_RINGS", "BAD_NODE_SPEC", "AMBIGUOUS_NODE_SPEC", "BAD_PORT", "BAD_SLOT",
    "BAD_RANGE", "BAD_ADDRESS", "NOT_A_MASTER", "INCONSISTENT_TOPOLOGY", "TOO_MANY_NODES",
    "NOT_A_REDIRECT", "BAD_REDIRECT", "BAD_PLAN", "STALE_PLAN", "BAD_POOL_KEY", "BAD_COUNT",
    "BAD_RESTORE_MODE", "EMPTY_MEMBER", "BAD_TTL", "REDIS_BAD_URL", "REDIS_CONNECT",
    "REDIS_AUTH", "REDIS_TIMEOUT", "REDIS_CONNECTION_LOST", "REDIS_WRONGTYPE", "REDIS_SERVER",
    "REDIS_PROTOCOL", "CLUSTER_NO_OWNER", "CLUSTER_RETRIES_EXHAUSTED", "CLUSTER_UNREACHABLE",
    "BUSY", "REDIS_READONLY", "REDIS_TLS", "CACHE_TIMEOUT", "BACKEND_ERROR", "SESSION_EXPIRED",
    "VERSION_MISMATCH", "NOT_FOUND", "VALUE_TOO_LARGE", "BAD_CLIENT_ID", "BAD_KIND",
    "BAD_DEVICE_ID", "BAD_SESSION_ID", "BAD_VERSION", "SESSION_CLIENT_MISMATCH", "BAD_CONFIG",
    "UNSUPPORTED_CONFIG",
]
# END GENERATED

# BEGIN GENERATED: limits and constants from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
DEFAULT_NATIVE_VNODES: Final = 160
SLOT_COUNT: Final = 16384
MAX_KEYS_PER_CALL: Final = 16777216
MAX_PICKS_PER_CALL: Final = 16777216
MAX_EXACT_COUNT: Final = 9007199254740992
MAX_WARM_KINDS: Final = 64
# END GENERATED

# BEGIN GENERATED: message types, transport errors and header constants from core's frame (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
_MsgTypeName: TypeAlias = Literal[
    "ping", "session.create", "session.touch", "session.destroy", "session.list",
    "session.update", "cache.get", "cache.put", "cache.invalidate", "product.get", "app.start",
    "device.bind", "worker.ready", "load", "loaded", "failed",
]
_TransportErrorName: TypeAlias = Literal[
    "QUEUE_FULL", "EXPIRED", "SHUTTING_DOWN", "BAD_HEADER", "UNKNOWN_TYPE", "NO_LOADER",
    "STORE_UNAVAILABLE", "LOAD_TIMEOUT", "AT_CAP", "TOO_MANY_WAITERS", "STORE_FULL",
    "UNKNOWN_SYSTEM",
]
FRAME_VERSION: Final = 1
FRAME_SYSTEM: Final = 0
FRAME_REPLY_BIT: Final = 32768
FRAME_FLAG_DATA_ERROR: Final = 1
FRAME_HEADER_FIXED_LEN: Final = 29
FRAME_MAX_HEADER_LEN: Final = 512
# END GENERATED

__all__ = [
    "__version__", "KeyrouteError", "RingError", "NodeNotFoundError", "SlotMapError",
    "RedirectError", "PlanError", "PoolError", "BadTypeError", "BadUtf8Error",
    "OutOfRangeError", "TooLargeError", "InternalError", "RedisError", "RedisBadUrlError",
    "RedisConnectionError", "RedisTimeoutError", "RedisAuthError", "RedisWrongTypeError",
    "RedisServerError", "RedisProtocolError", "ERROR_CODES", "Ring", "parse_nodes",
    "parse_weights", "RingDiff", "MovedArc", "PROFILES", "DEFAULT_NATIVE_VNODES", "key_slot",
    "key_slots", "key_slots_array", "hash_tag", "SLOT_COUNT", "MAX_KEYS_PER_CALL", "SlotMap", "Plan",
    "group_by_slot", "parse_redirect", "Pool", "Script", "SCRIPTS", "LEAST_USED_SCRIPT",
    "LEAST_USED_SHA1", "SEED_SCRIPT", "SEED_SHA1", "REMOVE_SCRIPT", "REMOVE_SHA1",
    "RESTORE_SCRIPT", "RESTORE_SHA1", "MAX_EXACT_COUNT", "MAX_PICKS_PER_CALL", "LeastUsed",
    "Leases", "Lease", "CacheInputError", "CacheTimeout", "BackendError", "SessionExpired",
    "SessionVersionMismatch", "SmartCache", "WarmReport", "Sessions", "Session", "Devices",
    "MAX_WARM_KINDS", "CACHE_DEFAULTS", "Router", "ENGINES", "Bounded", "Affinity",
]

__version__: str
# Error code -> number: the keys are core's codes (_ErrorCode); typed to take any str, as
# KeyrouteError.code is one (the class-level code of a class of several codes is "").
ERROR_CODES: Mapping[_ErrorCode | str, int]
PROFILES: tuple[_ProfileName, ...]
ENGINES: tuple[_EngineName, ...]
LEAST_USED_SCRIPT: str
LEAST_USED_SHA1: str
SEED_SCRIPT: str
SEED_SHA1: str
REMOVE_SCRIPT: str
REMOVE_SHA1: str
RESTORE_SCRIPT: str
RESTORE_SHA1: str
# Core's defaults of SmartCache and Sessions (keyroute::cache::CacheSettings::DEFAULT,
# SessionSettings::DEFAULT): lease_ms, soft_ttl_ms, hard_ttl_ms, neg_ttl_ms, serve_stale,
# fast_hits, xfetch_beta, max_value_bytes, io_timeout_ms, timeout_ms, session_ttl_ms,
# session_max_data_bytes.
CACHE_DEFAULTS: Mapping[str, int | float | bool]

# Core's frame codec of `keyroute serve` (keyroute::frame), for keyroute.serve: not in
# __all__. The header's fields in wire order; the request id cut or zero-padded to 16
# bytes.
FRAME_MSG_TYPES: Mapping[_MsgTypeName, int]
FRAME_TRANSPORT_ERRORS: Mapping[int, _TransportErrorName]

def encode_frame_header(
    version: int,
    system: int,
    msg_type: int,
    transport_error: int,
    flags: int,
    priority: int,
    deadline_ms: int,
    request_id: bytes,
    session_id: bytes,
) -> bytes:
    """The header frame of these fields, as core writes it."""

def decode_frame_header(frame: bytes) -> tuple[int, int, int, int, int, int, int, bytes, bytes]:
    """Every field of a header frame, in wire order, as core reads it."""

# --- errors: every exception keyroute raises carries .code (a key of ERROR_CODES) -----

class KeyrouteError(Exception):
    """Base class of every error keyroute raises; ``code`` names the error."""

    code: str

class RingError(KeyrouteError, ValueError):
    """A ring or node list was refused (name, weight, profile, options, ambiguity)."""

class NodeNotFoundError(KeyrouteError, KeyError, IndexError):
    """The node is not on the ring or in the slot map (UNKNOWN_NODE)."""

class SlotMapError(KeyrouteError, ValueError):
    """A slot map could not be built or changed."""

class RedirectError(KeyrouteError, ValueError):
    """A MOVED/ASK message could not be parsed."""

class PlanError(KeyrouteError, ValueError):
    """A resharding plan could not be made or applied."""

class PoolError(KeyrouteError, ValueError):
    """A pool argument was refused (key, count, mode, empty member, TTL or timeout)."""

class BadTypeError(KeyrouteError, TypeError):
    """An argument has the wrong type (BAD_TYPE)."""

class BadUtf8Error(KeyrouteError, UnicodeError):
    """Text that must be UTF-8 is not (BAD_UTF8)."""

class OutOfRangeError(KeyrouteError, ValueError, OverflowError):
    """A number is outside the range its parameter accepts (OUT_OF_RANGE)."""

class TooLargeError(KeyrouteError, ValueError):
    """A count or size is above the stated limit; nothing was allocated (TOO_LARGE)."""

class InternalError(KeyrouteError, RuntimeError):
    """A bug in keyroute (a caught panic) (INTERNAL)."""

class CacheInputError(KeyrouteError, ValueError):
    """A smart-cache, session or device argument was refused, or a value is too large."""

class CacheTimeout(KeyrouteError, TimeoutError):
    """The deadline passed before a value was served (CACHE_TIMEOUT)."""

class BackendError(KeyrouteError):
    """The loader failed, here or (cached) in another instance (BACKEND_ERROR).

    ``backend_code``: the loader's code (its exception's ``code`` attribute, else its
    class name); ``backend_message``: its text; ``cached``: whether it came from the
    cache. The loader's own exception is ``__cause__`` for the caller that ran it.
    """

    backend_code: str
    backend_message: str
    cached: bool

class SessionExpired(KeyrouteError):
    """The session expired, was destroyed or never existed: log in again (SESSION_EXPIRED)."""

class SessionVersionMismatch(KeyrouteError):
    """The session was created by another service version (VERSION_MISMATCH)."""

    stored_version: str

class RedisError(KeyrouteError):
    """Talking to Redis failed; the subclass and ``code`` say how."""

class RedisBadUrlError(RedisError, ValueError):
    """A Redis URL cannot be used (REDIS_BAD_URL)."""

class RedisConnectionError(RedisError, ConnectionError):
    """Unreachable or refused (REDIS_CONNECT), or broken mid-call (REDIS_CONNECTION_LOST)."""

class RedisTimeoutError(RedisError, TimeoutError):
    """Connecting or waiting for a reply timed out (REDIS_TIMEOUT)."""

class RedisAuthError(RedisError):
    """The server refused the credentials (REDIS_AUTH)."""

class RedisWrongTypeError(RedisError):
    """A key holds another type; the script changed nothing (REDIS_WRONGTYPE)."""

class RedisServerError(RedisError):
    """Redis answered an error (REDIS_SERVER)."""

class RedisProtocolError(RedisError):
    """The reply is not what the command gives (REDIS_PROTOCOL)."""

# --- rings ----------------------------------------------------------------------------

def parse_nodes(text: str) -> list[tuple[str, int]]:
    """A node list as people write it -> [(name, weight), ...]; host:port keeps its port."""

def parse_weights(text: str) -> list[tuple[str, int]]:
    """Target weights for a resharding plan (0 allowed) -> [(name, weight), ...]."""

@final
class Ring:
    """A consistent-hash ring.

    ``nodes`` is a mapping name -> weight, or an iterable of names (weight 1) or
    ``(name, weight)`` pairs; order matters for ties in the ketama family.
    ``profile`` is one of :data:`PROFILES` (default ``"native"``). ``vnodes`` defaults to
    the profile's (160 points per unit of weight for native, 40 digests per server for
    the ketama family); ``default_port`` is the port left out of hashed server strings
    (0: none); ``points_per_digest`` (1..4, MD5 profiles only) is uhashring's
    ``replicas`` or npm hashring's ``hash_ring`` compatibility (3).
    """

    def __new__(
        cls,
        nodes: _NodeSpec | None = None,
        *,
        profile: str | None = None,
        vnodes: int | None = None,
        default_port: int | None = None,
        points_per_digest: int | None = None,
    ) -> Self: ...
    @classmethod
    def from_spec(
        cls,
        spec: str,
        *,
        profile: str | None = None,
        vnodes: int | None = None,
        default_port: int | None = None,
        points_per_digest: int | None = None,
    ) -> Ring: ...
    def get(self, key: _Key) -> str | None: ...
    def get_n(self, key: _Key, n: int) -> list[str]: ...
    def get_many(self, keys: Iterable[_Key]) -> list[str | None]: ...
    def get_many_indexes(self, keys: Iterable[_Key]) -> array[int]: ...
    def add(self, node: str, weight: int | None = None) -> None: ...
    def remove(self, node: str) -> None: ...
    def set_weight(self, node: str, weight: int) -> None: ...
    def weight(self, node: str) -> int: ...
    def weights(self) -> dict[str, int]: ...
    def points(self) -> list[tuple[int, str]]: ...
    def arcs(self) -> list[tuple[int, int, str]]: ...
    def shares(self) -> dict[str, float]: ...
    def diff(self, other: Ring) -> RingDiff: ...
    def copy(self) -> Ring: ...
    def __getnewargs_ex__(self) -> tuple[tuple[list[tuple[str, int]]], dict[str, object]]: ...
    def __copy__(self) -> Ring: ...
    def __deepcopy__(self, memo: object, /) -> Ring: ...
    @property
    def profile(self) -> _ProfileName: ...
    @property
    def vnodes(self) -> int: ...
    @property
    def default_port(self) -> int | None: ...
    @property
    def points_per_digest(self) -> int: ...
    @property
    def point_count(self) -> int: ...
    @property
    def nodes(self) -> list[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, node: object, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...

@final
class Router:
    """Any engine or fleet profile by name (one of :data:`ENGINES`: jump, guava-jump,
    rendezvous, maglev, nginx, haproxy, twemproxy, jedis, envoy-ring, go-redis, ...), or
    the pool of a proxy configuration (:meth:`from_config`).

    ``nodes`` is as for :class:`Ring`; ``options`` maps an option name to a str, int or
    bool (``{"table_size": 65537}``, ``{"version": 2}``, ``{"hash": "fnv1a_64"}``).
    :meth:`add` and :meth:`remove` change it at run time as the engine's peer does: a new
    build over the new node list for most engines, in place for ``java-hashcode`` and
    ``redis-rb`` (see docs/design.md).
    """

    def __new__(
        cls,
        engine: str,
        nodes: _NodeSpec,
        options: Mapping[str, str | int | bool] | Iterable[tuple[str, str | int | bool]] | None = None,
    ) -> Self: ...
    @staticmethod
    def from_config(
        text: str,
        pool: str | None = None,
        *,
        file: str | None = None,
        allow_down: bool | None = None,
        resolved: Mapping[str, int] | None = None,
        includes: Mapping[str, str] | None = None,
    ) -> Router: ...
    @staticmethod
    def engines() -> list[_EngineName]: ...
    @property
    def engine(self) -> _EngineName: ...
    @property
    def nodes(self) -> list[str]: ...
    @property
    def format(self) -> str | None: ...
    @property
    def pool(self) -> str | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def servers(self) -> list[tuple[str, str, int, int]] | None: ...
    @property
    def notes(self) -> list[str] | None: ...
    def get(self, key: _Key) -> str | None: ...
    def get_index(self, key: _Key) -> int | None: ...
    def get_n(self, key: _Key, n: int) -> list[str]: ...
    def get_many(self, keys: Iterable[_Key]) -> list[str | None]: ...
    def add(self, node: str, weight: int | None = None) -> None: ...
    def remove(self, node: str) -> None: ...
    def __len__(self) -> int: ...

@final
class Bounded:
    """Consistent hashing with bounded loads over a :class:`Router`: no node above
    ceil(c * m / n) of the m assigned keys (``c`` at least 1). The state lives in this
    object."""

    def __new__(cls, router: Router, c: float) -> Self: ...
    def assign(self, key: _Key) -> str | None: ...
    def release(self, key: _Key) -> list[tuple[bytes, str, str]] | None: ...
    def owner_of(self, key: _Key) -> str | None: ...
    @property
    def loads(self) -> list[tuple[str, int]]: ...
    @property
    def cap(self) -> int: ...
    @property
    def assigned(self) -> int: ...

@final
class MovedArc:
    """A stretch of the circle (start..=end) whose owner changed."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def old_node(self) -> str | None: ...
    @property
    def new_node(self) -> str | None: ...

@final
class RingDiff:
    """What changes between two rings."""

    @property
    def moved(self) -> list[MovedArc]: ...
    @property
    def moved_fraction(self) -> float: ...
    @property
    def ideal_fraction(self) -> float: ...

# --- slots ----------------------------------------------------------------------------

def key_slot(key: _Key) -> int: ...
def key_slots(keys: Iterable[_Key]) -> list[int]: ...
def key_slots_array(keys: Iterable[_Key]) -> array[int]: ...
@overload
def hash_tag(key: str) -> str: ...
@overload
def hash_tag(key: bytes) -> bytes: ...

def group_by_slot(keys: Iterable[_Key]) -> list[tuple[int, list[int]]]: ...
def parse_redirect(message: _Key) -> tuple[Literal["moved", "ask"], int, str, int]:
    """A MOVED/ASK message -> (kind, slot, host, port)."""

@final
class SlotMap:
    """A Redis Cluster slot map: 16384 slots -> master. Nodes are ints (their index)."""

    def __new__(cls) -> Self: ...
    @classmethod
    def from_slots(cls, reply: Iterable[Any] | Mapping[Any, Any]) -> SlotMap:
        """From a CLUSTER SLOTS reply, raw or as redis-py's cluster_slots() dict."""
    @classmethod
    def from_shards(cls, reply: Iterable[Any]) -> SlotMap:
        """From a CLUSTER SHARDS reply, raw or as redis-py's cluster_shards()."""
    @classmethod
    def from_redis_py(cls, client: Any) -> SlotMap:
        """The map of the cluster a redis-py client (RedisCluster or Redis) talks to."""
    def add_master(self, id: str, address: _Address) -> int: ...
    def add_replica(self, master: int, id: str, address: _Address) -> int: ...
    def assign(self, start: int, end: int, node: int) -> None: ...
    def unassign(self, start: int, end: int) -> None: ...
    def set_health(self, node: int, health: str) -> None: ...
    def owner(self, slot: int) -> int | None: ...
    def owner_of_key(self, key: _Key) -> int | None: ...
    def address_for_slot(self, slot: int) -> str | None: ...
    def address_for_key(self, key: _Key) -> str | None: ...
    def node(self, node: int) -> dict[str, Any]: ...
    def find_id(self, id: str) -> int | None: ...
    def find_address(self, address: _Address) -> int | None: ...
    def slot_counts(self) -> list[int]: ...
    def ranges(self) -> list[tuple[int, int, int | None]]: ...
    def is_complete(self) -> bool: ...
    def apply_redirect(
        self, message: _Key, current_host: str
    ) -> tuple[Literal["moved", "ask"], str, int | None]: ...
    def group_by_node(self, keys: Iterable[_Key]) -> list[tuple[int | None, list[int]]]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, node: int, /) -> dict[str, Any]: ...

@final
class Plan:
    """A resharding plan: the fewest slot moves to reach the target weights.

    ``weights`` maps each master (index, "host:port" or node id) to an int >= 0.
    """

    def __new__(
        cls,
        slot_map: SlotMap,
        weights: Mapping[int | str, int] | Iterable[tuple[int | str, int]],
    ) -> Self: ...
    @property
    def moves(self) -> list[tuple[int, int, int | None, int]]: ...
    @property
    def targets(self) -> list[dict[str, Any]]: ...
    @property
    def slots_moved(self) -> int: ...
    def apply(self, slot_map: SlotMap) -> None: ...
    def __len__(self) -> int: ...

# --- least-used selection -------------------------------------------------------------

@final
class Script:
    """A Lua script keyroute runs on Redis (EVALSHA sha1, loading text on NOSCRIPT)."""

    @property
    def name(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def sha1(self) -> str: ...
    @property
    def num_keys(self) -> int: ...

SCRIPTS: tuple[Script, ...]

_RestoreMode: TypeAlias = Literal["at_minimum", "keep"]

@final
class Pool:
    """A least-used pool in memory, with the semantics of the Redis scripts.

    Members come back as ``str`` (``*_bytes`` variants: ``bytes``).
    """

    def __new__(
        cls, members: Iterable[_Key] | None = None, *, initial: int | None = None
    ) -> Self: ...
    def seed(
        self, members: Iterable[_Key], initial: int | None = None, overwrite: bool | None = None
    ) -> int: ...
    def pick(self) -> str | None: ...
    def pick_bytes(self) -> bytes | None: ...
    def pick_many(self, n: int) -> list[str]: ...
    def pick_many_bytes(self, n: int) -> list[bytes]: ...
    def remove(self, member: _Key) -> int | None: ...
    def restore(self, member: _Key, mode: _RestoreMode | None = None) -> int: ...
    def count(self, member: _Key) -> int | None: ...
    def removed_count(self, member: _Key) -> int | None: ...
    def min_count(self) -> int | None: ...
    def counts(self) -> dict[str, int]: ...
    def counts_bytes(self) -> dict[bytes, int]: ...
    def removed(self) -> dict[str, int]: ...
    def removed_bytes(self) -> dict[bytes, int]: ...
    def __len__(self) -> int: ...
    def __contains__(self, member: object, /) -> bool: ...

@final
class LeastUsed:
    """A least-used pool on a Redis server (sorted set at ``key``), same answers as Pool.

    ``url`` is ``redis://[:password@]host:port/db`` (or ``host:port``); with
    ``cluster=True``, one seed URL of a Redis Cluster or a list of them (the pool key
    should carry a hash tag, e.g. ``{proxies}:pool``): picks then follow MOVED/ASK,
    survive failovers (a call during one raises; the next works once a replica took
    over) and ``pick_many`` counts every pick once even while the pool's slot migrates.
    ``read_from_replicas=True`` (cluster only) sends counts/removed to a replica.
    ``timeout`` (seconds, default 2) bounds the connect and every read and write.
    Connects on the first call (or :meth:`connect`), reconnects after a connection error.
    Thread-safe; calls release the GIL.
    """

    def __new__(
        cls,
        url: str | Sequence[str],
        key: _Key,
        *,
        timeout: float | None = None,
        cluster: bool = False,
        read_from_replicas: bool = False,
    ) -> Self: ...
    def connect(self) -> None: ...
    def seed(
        self, members: Iterable[_Key], initial: int | None = None, overwrite: bool | None = None
    ) -> int: ...
    def pick(self) -> str | None: ...
    def pick_bytes(self) -> bytes | None: ...
    def pick_many(self, n: int) -> list[str]: ...
    def pick_many_bytes(self, n: int) -> list[bytes]: ...
    def remove(self, member: _Key) -> int | None: ...
    def restore(self, member: _Key, mode: _RestoreMode | None = None) -> int: ...
    def counts(self) -> dict[str, int]: ...
    def counts_bytes(self) -> dict[bytes, int]: ...
    def removed(self) -> dict[str, int]: ...
    def removed_bytes(self) -> dict[bytes, int]: ...
    @property
    def key(self) -> bytes: ...
    @property
    def side_key(self) -> bytes: ...
    @property
    def timeout(self) -> float: ...
    @property
    def cluster(self) -> bool: ...
    @property
    def read_from_replicas(self) -> bool: ...

@final
class Lease:
    """A lease on a member of a Leases pool: in flight until released or reclaimed."""

    def __new__(cls, member: _Key, id: int, deadline_ms: int) -> Self: ...
    @property
    def member(self) -> str: ...
    @property
    def member_bytes(self) -> bytes: ...
    @property
    def id(self) -> int: ...
    @property
    def deadline_ms(self) -> int: ...
    def __getnewargs__(self) -> tuple[bytes, int, int]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Leases:
    """Least-concurrency selection on a Redis server (leases with deadlines).

    Same connection options (``cluster=True`` included) and thread-safety as
    :class:`LeastUsed`; with ``read_from_replicas=True`` in_flight/outstanding read from
    a replica.
    """

    def __new__(
        cls,
        url: str | Sequence[str],
        key: _Key,
        *,
        timeout: float | None = None,
        cluster: bool = False,
        read_from_replicas: bool = False,
    ) -> Self: ...
    def connect(self) -> None: ...
    def seed(self, members: Iterable[_Key]) -> int: ...
    def remove(self, member: _Key) -> bool: ...
    def acquire(self, ttl: float) -> Lease | None: ...
    def release(
        self, lease: Lease
    ) -> Literal["released", "expired", "already_released_or_expired"]: ...
    def reclaim(self, *, now_ms: int | None = None) -> list[Lease]: ...
    def in_flight(self) -> dict[str, int]: ...
    def in_flight_bytes(self) -> dict[bytes, int]: ...
    def outstanding(self) -> int: ...
    @property
    def keys(self) -> list[bytes]: ...
    @property
    def timeout(self) -> float: ...
    @property
    def cluster(self) -> bool: ...
    @property
    def read_from_replicas(self) -> bool: ...

@final
class Affinity:
    """Affinity with a cap on a Redis server: each item held by one node, a take going to
    the first candidate under the cap atomically (bounded-load consistent hashing shared
    by every worker). Same connection options as :class:`LeastUsed`."""

    def __new__(
        cls,
        url: str | Sequence[str],
        key: _Key,
        *,
        timeout: float | None = None,
        cluster: bool = False,
        read_from_replicas: bool = False,
    ) -> Self: ...
    def connect(self) -> None: ...
    def take(
        self,
        item: _Key,
        candidates: Iterable[_Key],
        *,
        cap: int | None = None,
        c: float | None = None,
    ) -> tuple[str, int, int, bool] | None: ...
    def release(self, item: _Key) -> str | None: ...
    def holder(self, item: _Key) -> str | None: ...
    def loads(self) -> dict[str, int]: ...
    def held(self) -> int: ...
    @property
    def keys(self) -> list[bytes]: ...

# --- smart cache on Redis -------------------------------------------------------------

_Url: TypeAlias = str | Sequence[str]

@final
class SmartCache:
    """A cache on Redis shared by every process and server: a cold key is loaded once.

    ``url`` is ``redis://[:password@]host:port[/db]`` (or ``host:port``); with
    ``cluster=True``, one seed URL of a Redis Cluster or a list of them. ``timeout``
    (seconds; default 2, 1 on a cluster) bounds connecting and each Redis reply.
    Connections open and scripts load here. Thread-safe; belongs to the process that
    made it (make one per process after a fork).
    """

    def __new__(
        cls,
        url: _Url,
        *,
        lease_ms: int = 2000,
        soft_ttl_ms: int = 60000,
        hard_ttl_ms: int = 600000,
        neg_ttl_ms: int = 1000,
        cluster: bool = False,
        timeout: float | None = None,
    ) -> Self: ...
    def get_or_load(
        self, client: str, kind: str, loader: Callable[[], bytes], *, timeout_ms: int = 5000
    ) -> bytes: ...
    def invalidate(self, client: str, kind: str) -> bool: ...
    def put(self, client: str, kind: str, value: bytes, *, ttl_ms: int | None = None) -> None: ...
    def warm(
        self, device: str, kinds: Sequence[str], loader: Callable[[str, str], bytes]
    ) -> WarmReport: ...
    def stats(self) -> dict[str, int]: ...
    @property
    def lease_ms(self) -> int: ...
    @property
    def soft_ttl_ms(self) -> int: ...
    @property
    def hard_ttl_ms(self) -> int: ...
    @property
    def neg_ttl_ms(self) -> int: ...
    @property
    def max_value_bytes(self) -> int: ...
    @property
    def cluster(self) -> bool: ...

@final
class WarmReport:
    """What SmartCache.warm did."""

    @property
    def client(self) -> str | None: ...
    @property
    def granted(self) -> list[str]: ...
    @property
    def skipped(self) -> list[str]: ...
    @property
    def failed(self) -> list[tuple[str, KeyrouteError]]: ...

@final
class Session:
    """A live session (its expiry already slid)."""

    @property
    def id(self) -> str: ...
    @property
    def client(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def version(self) -> str: ...
    @property
    def expires_at(self) -> int: ...

@final
class Sessions:
    """Client sessions on Redis with a sliding TTL (ms), an optional maximum age and a
    service-version check. Same ``url``, ``cluster`` and ``timeout`` as SmartCache."""

    def __new__(
        cls,
        url: _Url,
        *,
        ttl_ms: int,
        max_age_ms: int | None = None,
        cluster: bool = False,
        timeout: float | None = None,
    ) -> Self: ...
    def create(self, client: str, version: str, data: bytes) -> str: ...
    def touch(self, sid: str, version: str | None = None) -> Session: ...
    def destroy(self, sid: str) -> bool: ...
    def list(self, client: str) -> builtins.list[tuple[str, int]]: ...
    @property
    def ttl_ms(self) -> int: ...
    @property
    def max_age_ms(self) -> int | None: ...
    @property
    def cluster(self) -> bool: ...

@final
class Devices:
    """Device -> client bindings on Redis, for warm-up before login."""

    def __new__(
        cls, url: _Url, *, cluster: bool = False, timeout: float | None = None
    ) -> Self: ...
    def bind(self, device: str, client: str, ttl_ms: int) -> None: ...
    def client_of(self, device: str) -> str | None: ...
    @property
    def cluster(self) -> bool: ...
