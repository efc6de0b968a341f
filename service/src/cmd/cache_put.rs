//! `cache.put {client, kind, ttl_ms?}` + payload (the value) → `{}`: a direct write
//! (`sc-put`, the call `SmartCache::put` makes) that bumps the entry's fence, so a load in
//! flight for it is discarded and its waiters get this value.

use keyroute::cache::{check_value_len, checked_ms, Call, ClientKeys, PutReply, TokenKey};
use keyroute::frame::MsgType;
use serde::Deserialize;
use serde_json::json;

use super::{input, reply, required, Command, Ctx, Request};
use crate::proto::{body, Answer};

pub(super) const COMMAND: Command = Command::new(MsgType::CachePut, read);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    client: String,
    kind: String,
    #[serde(default)]
    ttl_ms: Option<u64>,
}

#[derive(Debug)]
struct CachePut {
    body: Body,
    value: Vec<u8>,
}

fn read(ty: MsgType, b: &[u8], payload: Option<Vec<u8>>) -> Result<Box<dyn Request>, Answer> {
    Ok(Box::new(CachePut {
        body: body(b)?,
        value: required(ty, payload)?,
    }))
}

impl Request for CachePut {
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer> {
        let b = &self.body;
        let keys = ClientKeys::new(b.client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let entry = keys.entry(b.kind.as_bytes()).map_err(input)?;
        let s = &ctx.settings.cache;
        check_value_len(self.value.len(), s.max_value_len).map_err(input)?;
        // `ttl_ms` for freshness and keeping alike; the soft and hard TTLs without it.
        let (soft, hard) = match b.ttl_ms {
            None => (s.soft_ttl_ms, s.hard_ttl_ms),
            Some(t) => {
                let t = checked_ms("ttl_ms", i128::from(t), 1).map_err(input)?;
                (t, t)
            }
        };
        let call = Call::put(&entry, &self.value, soft, hard, ctx.notify(), None);
        PutReply::decode(ctx.run(call)?).map_err(reply)?;
        Ok(Answer::json(json!({})))
    }
}
