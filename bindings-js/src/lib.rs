//! keyroute bindings (being written).
