//! `session.list {client}` → `{sessions: [{sid, expires_at}]}`, soonest expiry first.

use keyroute::cache::{decode_sessions, Call, ClientToken, TokenKey};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<SessionList>(MsgType::SessionList);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionList {
    client: String,
}

impl Request for SessionList {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let token = ClientToken::of(self.client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let list = decode_sessions(ctx.run(Call::sess_list(token, None))?).map_err(reply)?;
        let items: Vec<_> = list
            .into_iter()
            .map(|(sid, x)| json!({ "sid": String::from_utf8_lossy(&sid), "expires_at": x }))
            .collect();
        Ok(Answer::json(json!({ "sessions": items })))
    }
}
