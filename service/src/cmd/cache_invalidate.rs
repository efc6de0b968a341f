//! `cache.invalidate {client, kind}` → `{dropped: bool}`: drops the value and bumps the
//! fence, so a load in flight is discarded and the next read loads afresh.

use keyroute::cache::{decode_flag, Call, ClientKeys, TokenKey};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<CacheInvalidate>(MsgType::CacheInvalidate);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheInvalidate {
    client: String,
    kind: String,
}

impl Request for CacheInvalidate {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let keys = ClientKeys::new(self.client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let entry = keys.entry(self.kind.as_bytes()).map_err(input)?;
        let tombstone = ctx.settings.cache.tombstone_ms();
        let call = Call::invalidate(&entry, tombstone, ctx.notify(), None);
        let dropped = decode_flag(&ctx.run(call)?, "sc-invalidate").map_err(reply)?;
        Ok(Answer::json(json!({ "dropped": dropped })))
    }
}
