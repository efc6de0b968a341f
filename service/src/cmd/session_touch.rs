//! `session.touch {sid, version?}` → `{client, expires_at}` + payload (the session data);
//! `SESSION_EXPIRED`, `VERSION_MISMATCH` (when `version` is given and the session was
//! made by another).

use keyroute::cache::{check_version, Call, SessionId, Touch};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{expired, input, mismatch, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<SessionTouch>(MsgType::SessionTouch);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionTouch {
    sid: String,
    #[serde(default)]
    version: Option<String>,
}

impl Request for SessionTouch {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let sid = SessionId::parse(self.sid.as_bytes()).map_err(input)?;
        let version = self.version.as_deref().map(str::as_bytes);
        if let Some(v) = version {
            check_version(v).map_err(input)?;
        }
        let touched = ctx.run_about(&sid, Call::sess_touch(&sid, version, None))?;
        match Touch::decode(touched).map_err(reply)? {
            Touch::Live {
                client,
                data,
                expires_at,
                ..
            } => Ok(Answer::Ok {
                body: Some(
                    json!({ "client": String::from_utf8_lossy(&client), "expires_at": expires_at }),
                ),
                payload: Some(data),
            }),
            Touch::Expired => Err(expired()),
            Touch::VersionMismatch { stored } => Err(mismatch(&stored)),
        }
    }
}
