//! Liveness and readiness, served on the metrics port ([`crate::metrics_http`]):
//! `/healthz` answers while the process runs; `/readyz` answers 200 only when the service
//! can serve: the store answers, a loader worker is registered for every
//! `--require-kind`, and the service is not stopping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use crate::store::Store;

/// What `/readyz` looks at.
pub(crate) struct Readiness {
    store: Arc<dyn Store>,
    /// `--require-kind`.
    required: Vec<String>,
    /// The kinds the connected workers declared (kept current by the broker).
    declared: Arc<Mutex<Vec<String>>>,
    /// The stop flag (SIGTERM): a stopping service is not ready.
    stop: Arc<AtomicBool>,
}

impl Readiness {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        required: Vec<String>,
        declared: Arc<Mutex<Vec<String>>>,
        stop: Arc<AtomicBool>,
    ) -> Readiness {
        Readiness {
            store,
            required,
            declared,
            stop,
        }
    }

    /// Whether the service is ready, and the JSON body that says why (not).
    pub(crate) fn check(&self) -> (bool, Json) {
        let stopping = self.stop.load(Ordering::Relaxed);
        let missing: Vec<&str> = {
            let declared = self.declared.lock().unwrap_or_else(|e| e.into_inner());
            self.required
                .iter()
                .filter(|k| !declared.contains(k))
                .map(String::as_str)
                .collect()
        };
        let store = self.store.ping();
        let mut reasons = Vec::new();
        if stopping {
            reasons.push("the service is stopping".to_string());
        }
        if let Err(e) = &store {
            reasons.push(format!("the store does not answer: {e}"));
        }
        for k in &missing {
            reasons.push(format!("no loader worker is registered for kind {k:?}"));
        }
        let ready = reasons.is_empty();
        let body = json!({
            "ready": ready,
            "store": store.err().map_or(Json::from("ok"), Json::from),
            "missing_kinds": missing,
            "stopping": stopping,
            "reasons": reasons,
        });
        (ready, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, Store};

    #[test]
    fn ready_only_with_every_required_kind_and_not_stopping() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new(Default::default()));
        let declared = Arc::new(Mutex::new(vec!["accounts".to_string()]));
        let stop = Arc::new(AtomicBool::new(false));
        let r = Readiness::new(
            store,
            vec!["accounts".into(), "cards".into()],
            Arc::clone(&declared),
            Arc::clone(&stop),
        );
        let (ready, body) = r.check();
        assert!(!ready);
        assert_eq!(body["missing_kinds"], json!(["cards"]));
        assert_eq!(body["store"], "ok");
        declared.lock().unwrap().push("cards".into());
        let (ready, body) = r.check();
        assert!(ready, "{body}");
        assert_eq!(body["reasons"], json!([]));
        stop.store(true, Ordering::Relaxed);
        let (ready, body) = r.check();
        assert!(!ready);
        assert_eq!(body["stopping"], true);
    }
}
