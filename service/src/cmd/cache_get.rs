//! `cache.get {client, kind}` → payload: the value; `NOT_FOUND`. Never loads.

use keyroute::cache::{decode_read, Call, ClientKeys, TokenKey};
use keyroute::error::ErrorCode;
use keyroute::frame::MsgType;
use serde::Deserialize;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<CacheGet>(MsgType::CacheGet);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheGet {
    client: String,
    kind: String,
}

impl Request for CacheGet {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let keys = ClientKeys::new(self.client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let entry = keys.entry(self.kind.as_bytes()).map_err(input)?;
        match decode_read(ctx.run(Call::read(&entry, None))?).map_err(reply)? {
            Some(value) => Ok(Answer::payload(value)),
            None => Err(Answer::data(
                ErrorCode::NotFound,
                format!("no value for kind {:?}", self.kind),
            )),
        }
    }
}
