//! `product.get {client, kind}` → payload: the value, read through: loaded by one loader
//! worker across every instance on a miss (the store's lease), the other requests for the
//! key waiting (in this instance parked by the broker, holding no thread). Under a session
//! the store's first read of the entry is guarded by it.

use keyroute::frame::MsgType;
use serde::Deserialize;

use super::{Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<ProductGet>(MsgType::ProductGet);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProductGet {
    client: String,
    kind: String,
}

impl Request for ProductGet {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let (client, kind) = (&self.client, &self.kind);
        let mut loader = || ctx.loads.load(client, kind, ctx.deadline);
        ctx.store
            .get_or_load(
                ctx.session.as_ref(),
                client,
                kind,
                ctx.deadline,
                &mut loader,
            )
            .map(Answer::payload)
    }

    fn loads(&self) -> Option<(&str, &str)> {
        Some((&self.client, &self.kind))
    }
}
