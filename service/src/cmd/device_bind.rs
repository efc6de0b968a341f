//! `device.bind {device, client}` → `{}`: the device names the client for 90 days
//! (renewed by every bind), for `app.start`. Under a session the session is checked first,
//! in a call of its own (the binding is in a slot of its own), and must be `client`'s.

use keyroute::cache::{check_client_id, decode_flag, device_key, Call, InputError};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, Command, Ctx, Request};
use crate::proto::Answer;

pub(super) const COMMAND: Command = Command::json::<DeviceBind>(MsgType::DeviceBind);

/// How long a binding lasts (ms).
const DEVICE_TTL_MS: u64 = 90 * 86_400_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceBind {
    device: String,
    client: String,
}

impl Request for DeviceBind {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let key = device_key(self.device.as_bytes()).map_err(input)?;
        check_client_id(self.client.as_bytes()).map_err(input)?;
        if let Some(owner) = ctx.session_first()? {
            if owner != self.client.as_bytes() {
                return Err(input(InputError::SessionClientMismatch));
            }
        }
        let bound = ctx.store.run(&Call::device_bind(
            &key,
            self.client.as_bytes(),
            DEVICE_TTL_MS,
        ))?;
        decode_flag(&bound, "device-bind").map_err(reply)?;
        Ok(Answer::json(json!({})))
    }
}
