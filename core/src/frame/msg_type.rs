//! [`MsgType`]: every message type of the protocol, with its number.

/// The bit a reply sets on its request's type.
pub const REPLY_BIT: u16 = 0x8000;

macro_rules! types {
    ($( $(#[$doc:meta])* $variant:ident = $num:literal, $name:literal; )*) => {
        /// A message type of the protocol (clients: 1–32, loader workers: 100–103).
        ///
        /// ```
        /// use keyroute::frame::MsgType;
        /// assert_eq!(MsgType::from_number(30), Some(MsgType::ProductGet));
        /// assert_eq!(MsgType::ProductGet.name(), "product.get");
        /// assert_eq!(MsgType::from_name("worker.ready"), Some(MsgType::WorkerReady));
        /// assert_eq!(MsgType::ProductGet.reply_number(), 0x801e);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        #[non_exhaustive]
        pub enum MsgType {
            $( $(#[$doc])* $variant = $num, )*
        }

        impl MsgType {
            /// Every type, in number order.
            pub const ALL: &'static [MsgType] = &[ $( MsgType::$variant, )* ];

            /// The dotted name (`"session.create"`).
            ///
            /// ```
            /// assert_eq!(keyroute::frame::MsgType::Ping.name(), "ping");
            /// ```
            pub const fn name(self) -> &'static str {
                match self { $( MsgType::$variant => $name, )* }
            }

            /// The type of a number (without the reply bit), if this version knows it.
            ///
            /// ```
            /// assert_eq!(keyroute::frame::MsgType::from_number(2), None);
            /// ```
            pub const fn from_number(n: u16) -> Option<MsgType> {
                match n { $( $num => Some(MsgType::$variant), )* _ => None }
            }
        }
    };
}

types! {
    /// `ping` → empty reply.
    Ping = 1, "ping";
    /// `session.create {client, version}` + payload (session data) → `{sid, expires_at}`.
    SessionCreate = 10, "session.create";
    /// `session.touch {sid, version?}` → `{client, expires_at}` + payload.
    SessionTouch = 11, "session.touch";
    /// `session.destroy {sid}` → `{destroyed}`.
    SessionDestroy = 12, "session.destroy";
    /// `session.list {client}` → `{sessions: [{sid, expires_at}]}`.
    SessionList = 13, "session.list";
    /// `session.update {sid, version}` + payload (the new session data) → `{expires_at}`.
    SessionUpdate = 14, "session.update";
    /// `cache.get {client, kind}` → payload.
    CacheGet = 20, "cache.get";
    /// `cache.put {client, kind, ttl_ms?}` + payload.
    CachePut = 21, "cache.put";
    /// `cache.invalidate {client, kind}` → `{dropped}`.
    CacheInvalidate = 22, "cache.invalidate";
    /// `product.get {client, kind}` → payload, loaded once through a loader worker.
    ProductGet = 30, "product.get";
    /// `app.start {device}`: warms the device's client; no reply.
    AppStart = 31, "app.start";
    /// `device.bind {device, client}`.
    DeviceBind = 32, "device.bind";
    /// Worker → broker: `worker.ready {kinds, capacity}`, also the heartbeat.
    WorkerReady = 100, "worker.ready";
    /// Broker → worker: `load {client, kind, fence}`.
    Load = 101, "load";
    /// Worker → broker: `loaded {fence}` + payload.
    Loaded = 102, "loaded";
    /// Worker → broker: `failed {fence, code, message}`.
    Failed = 103, "failed";
}

impl MsgType {
    /// Its number.
    ///
    /// ```
    /// assert_eq!(keyroute::frame::MsgType::Load.number(), 101);
    /// ```
    pub const fn number(self) -> u16 {
        self as u16
    }

    /// The number of its reply (number | 0x8000).
    ///
    /// ```
    /// assert_eq!(keyroute::frame::MsgType::Ping.reply_number(), 0x8001);
    /// ```
    pub const fn reply_number(self) -> u16 {
        self as u16 | REPLY_BIT
    }

    /// The type of a dotted name.
    ///
    /// ```
    /// assert_eq!(keyroute::frame::MsgType::from_name("nope"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<MsgType> {
        MsgType::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// Whether a client sends it (1–99) rather than a loader worker or the broker.
    ///
    /// ```
    /// use keyroute::frame::MsgType;
    /// assert!(MsgType::CacheGet.is_client() && !MsgType::Loaded.is_client());
    /// ```
    pub const fn is_client(self) -> bool {
        (self as u16) < 100
    }

    /// Whether it is answered: every client type but `app.start`.
    ///
    /// ```
    /// use keyroute::frame::MsgType;
    /// assert!(!MsgType::AppStart.has_reply() && MsgType::Ping.has_reply());
    /// ```
    pub const fn has_reply(self) -> bool {
        self.is_client() && !matches!(self, MsgType::AppStart)
    }
}
