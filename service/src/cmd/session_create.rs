//! `session.create {client, version}` + payload (the session data; absent = empty) →
//! `{sid, expires_at}`.

use keyroute::cache::{
    check_value_len, check_version, Call, ClientToken, CreateReply, SessionId, TokenKey,
};
use keyroute::error::ErrorCode;
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::{body, Answer};

pub(super) const COMMAND: Command = Command::new(MsgType::SessionCreate, read);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    client: String,
    version: String,
}

#[derive(Debug)]
struct SessionCreate {
    body: Body,
    data: Vec<u8>,
}

fn read(_: MsgType, b: &[u8], payload: Option<Vec<u8>>) -> Result<Box<dyn Request>, Answer> {
    Ok(Box::new(SessionCreate {
        body: body(b)?,
        data: payload.unwrap_or_default(),
    }))
}

impl Request for SessionCreate {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let Body { client, version } = &self.body;
        let token = ClientToken::of(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        check_version(version.as_bytes()).map_err(input)?;
        check_value_len(self.data.len(), ctx.settings.cache.max_value_len).map_err(input)?;
        // A taken id (a live session already has it) is drawn again.
        for _ in 0..4 {
            let mut random = [0u8; 16];
            getrandom::fill(&mut random)
                .map_err(|e| Answer::data(ErrorCode::Internal, format!("no random bytes: {e}")))?;
            let sid = SessionId::new(token, random);
            let call = Call::sess_create(
                &sid,
                client.as_bytes(),
                version.as_bytes(),
                ctx.settings.session_ttl_ms,
                0,
                &self.data,
                None,
            );
            match CreateReply::decode(ctx.run(call)?).map_err(reply)? {
                CreateReply::Created { expires_at } => {
                    return Ok(Answer::json(
                        json!({ "sid": sid.as_str(), "expires_at": expires_at }),
                    ))
                }
                CreateReply::Taken => {}
            }
        }
        Err(Answer::data(
            ErrorCode::Internal,
            "four fresh random session ids in a row were taken",
        ))
    }
}
