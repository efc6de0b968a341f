//! Redis Cluster hash slots (filled in by the slot work).
