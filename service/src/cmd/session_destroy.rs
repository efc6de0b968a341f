//! `session.destroy {sid}` → `{destroyed: bool}` (whether it was live). What a session
//! owns goes with it: its hash (client, version, its data: what `session.create` and
//! `session.update` stored) and its entry in the client's session index. The client's
//! cache entries are the client's, shared by all its sessions: they stay.

use keyroute::cache::{decode_flag, Call, SessionId};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<SessionDestroy>(MsgType::SessionDestroy);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionDestroy {
    sid: String,
}

impl Request for SessionDestroy {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let sid = SessionId::parse(self.sid.as_bytes()).map_err(input)?;
        let done = ctx.run_about(&sid, Call::sess_destroy(&sid, None))?;
        let destroyed = decode_flag(&done, "sess-destroy").map_err(reply)?;
        Ok(Answer::json(json!({ "destroyed": destroyed })))
    }
}
