//! `session.update {sid, version}` + payload (the new session data) → `{expires_at}`:
//! replaces the session's data when the session is live and was made by service
//! `version`, and slides it as a touch does; `SESSION_EXPIRED`, `VERSION_MISMATCH`
//! (nothing changed).

use keyroute::cache::{check_value_len, check_version, Call, SessionId, UpdateReply};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{expired, input, mismatch, reply, required, Command, Ctx, Request};
use crate::proto::{body, Answer};

pub(super) const COMMAND: Command = Command::new(MsgType::SessionUpdate, read);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    sid: String,
    version: String,
}

#[derive(Debug)]
struct SessionUpdate {
    body: Body,
    data: Vec<u8>,
}

fn read(ty: MsgType, b: &[u8], payload: Option<Vec<u8>>) -> Result<Box<dyn Request>, Answer> {
    Ok(Box::new(SessionUpdate {
        body: body(b)?,
        data: required(ty, payload)?,
    }))
}

impl Request for SessionUpdate {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let sid = SessionId::parse(self.body.sid.as_bytes()).map_err(input)?;
        let version = self.body.version.as_bytes();
        check_version(version).map_err(input)?;
        check_value_len(self.data.len(), ctx.settings.cache.max_value_len).map_err(input)?;
        let updated = ctx.run_about(&sid, Call::sess_update(&sid, version, &self.data, None))?;
        match UpdateReply::decode(updated).map_err(reply)? {
            UpdateReply::Updated { expires_at } => {
                Ok(Answer::json(json!({ "expires_at": expires_at })))
            }
            UpdateReply::Expired => Err(expired()),
            UpdateReply::VersionMismatch { stored } => Err(mismatch(&stored)),
        }
    }
}
