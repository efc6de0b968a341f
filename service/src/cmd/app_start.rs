//! `app.start {device}`: warms every kind the connected workers declared that is cold
//! for the client bound to `device`, each under its lease; no reply. Under a session the
//! session is checked first, in a call of its own (the device's binding is in a slot of
//! its own): an expired one warms nothing.

use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<AppStart>(MsgType::AppStart);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AppStart {
    device: String,
}

impl Request for AppStart {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        ctx.session_first()?;
        let kinds = ctx.loads.kinds();
        let loader = |client: &str, kind: &str| ctx.loads.load(client, kind, ctx.deadline);
        let warmed = ctx.store.warm(&self.device, &kinds, &loader)?;
        Ok(Answer::json(json!({ "warmed": warmed })))
    }
}
