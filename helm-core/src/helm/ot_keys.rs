//! Open Terminal keys, as the facade offers them: a channel's managers make,
//! rotate and revoke the key with which Open Terminal clients reach the
//! channel's computer; every request made with a key is checked against the
//! authority of the person who made it, as of that request.
//!
//! `#main` has no key: it runs on Skipper's host computer, unconfined, and a
//! long-lived key for it would be a key to the host.

use crate::auth::{Issued, OtKey, secret};
use crate::error::{Error, Result};
use crate::model::{ChannelKind, ChannelRef, User};
use crate::store::{ChannelRecord, NewOtKey};

use super::Helm;

/// The shortest key a computer server takes.
const MIN_COMPUTER_KEY: usize = 16;

impl Helm {
    /// The channel's live Open Terminal key (never its secret), if any; for
    /// its managers.
    pub async fn ot_key(&self, actor: &User, channel: &ChannelRef) -> Result<Option<OtKey>> {
        let record = self.ot_key_channel(actor, channel).await?;
        self.inner.store.ot_key(record.channel.id).await
    }

    /// Makes the channel's Open Terminal key (a conflict if it has one; with
    /// `rotate`, the old one stops working instead). The secret is returned
    /// once and stored only as its hash.
    pub async fn issue_ot_key(
        &self,
        actor: &User,
        channel: &ChannelRef,
        rotate: bool,
    ) -> Result<Issued<OtKey>> {
        let record = self.ot_key_channel(actor, channel).await?;
        let secret = secret::generate(secret::OT_KEY_PREFIX)?;
        let record = self
            .inner
            .store
            .insert_ot_key(
                NewOtKey {
                    channel_id: record.channel.id,
                    secret_hash: secret::digest(&secret),
                    prefix: secret
                        .chars()
                        .take(secret::OT_KEY_PREFIX.len() + 6)
                        .collect(),
                    created_by: actor.id,
                },
                rotate,
            )
            .await?;
        Ok(Issued { record, secret })
    }

    /// Revokes the channel's Open Terminal key.
    pub async fn revoke_ot_key(&self, actor: &User, channel: &ChannelRef) -> Result<OtKey> {
        let record = self.ot_key_channel(actor, channel).await?;
        self.inner.store.revoke_ot_key(record.channel.id).await
    }

    /// Who an Open Terminal key presented for `channel` acts as: the person
    /// who made it, if it is the channel's live key and they still may use
    /// the channel's computer. Any other key, including another channel's,
    /// is `unauthenticated`.
    pub async fn authenticate_ot_key(
        &self,
        channel: &ChannelRef,
        presented: &str,
    ) -> Result<(ChannelRecord, User)> {
        let refused = || {
            Error::Unauthenticated(
                "the Open Terminal key is unknown, revoked or not this channel's".into(),
            )
        };
        if secret::looks_like(presented, secret::NODE_KEY_PREFIX) {
            return self.authenticate_node_key(channel, presented).await;
        }
        if let Some((served, digest)) = self.inner.served_computer.get()
            && secret::digest(presented) == *digest
        {
            let record = self
                .keyed_channel(channel, |r| r.channel.id == *served, refused)
                .await?;
            return Ok((record, self.captain().await?));
        }
        if !secret::looks_like(presented, secret::OT_KEY_PREFIX) {
            return Err(refused());
        }
        let Some(key) = self
            .inner
            .store
            .ot_key_by_hash(&secret::digest(presented))
            .await?
        else {
            return Err(refused());
        };
        let record = self
            .keyed_channel(channel, |r| r.channel.id == key.channel_id, refused)
            .await?;
        let user = self.inner.store.user(key.created_by).await?;
        if !user.is_active() {
            // Its maker was deactivated: the key acts for no one.
            return Err(refused());
        }
        match self
            .computer_channel(&user, &ChannelRef::Id(record.channel.id))
            .await
        {
            Ok(record) => Ok((record, user)),
            // Its maker lost access to the channel: so did the key.
            Err(Error::NotFound { .. } | Error::Forbidden(_)) => Err(refused()),
            Err(e) => Err(e),
        }
    }

    /// The channel a request names, if the key it presented opens it
    /// (`opens`); any other, or none, is `refused` alike, so that a key
    /// tells nothing of channels it does not open.
    async fn keyed_channel(
        &self,
        channel: &ChannelRef,
        opens: impl Fn(&ChannelRecord) -> bool,
        refused: impl Fn() -> Error,
    ) -> Result<ChannelRecord> {
        match self.channel(channel).await {
            Ok(record) if opens(&record) => Ok(record),
            Ok(_) | Err(Error::NotFound { .. }) => Err(refused()),
            Err(e) => Err(e),
        }
    }

    /// Another node of this store reaching a channel computer this node
    /// holds, on behalf of someone it has checked: it acts as the Captain.
    /// `#main` (Skipper's host computer, each node's own) is never reached
    /// this way.
    async fn authenticate_node_key(
        &self,
        channel: &ChannelRef,
        presented: &str,
    ) -> Result<(ChannelRecord, User)> {
        let refused = || {
            Error::Unauthenticated(
                "the node key is unknown (is the asking node on this workspace's store?) or not \
                 for this channel"
                    .into(),
            )
        };
        if self
            .inner
            .store
            .node_by_key(&secret::digest(presented))
            .await?
            .is_none()
        {
            return Err(refused());
        }
        let record = self
            .keyed_channel(channel, |r| r.channel.kind != ChannelKind::Home, refused)
            .await?;
        // Only the holder serves it: a node reached at an address that is
        // not its own (a loopback node URL on a host of several nodes)
        // would otherwise pass the call on, maybe to itself.
        if !self.inner.computer.holds(record.channel.id).await? {
            return Err(Error::ComputerUnreachable(format!(
                "this node does not hold the computer of {}; the node URL the asking node used \
                 reaches the wrong node: give each node the address the others reach it at",
                record.channel.name
            )));
        }
        Ok((record, self.captain().await?))
    }

    /// Serves the computer of `channel` (made if it does not exist) to
    /// other Helm servers: requests presenting `key` act as the Captain on
    /// it, and only on it. What a computer server (`helm-http computer`)
    /// does at start; the key lives in this process only (as its digest).
    pub async fn serve_computer(&self, channel: &str, key: &str) -> Result<ChannelRecord> {
        if key.trim().len() < MIN_COMPUTER_KEY {
            return Err(Error::invalid(
                "computer key",
                format!(
                    "it is {} characters; use at least {MIN_COMPUTER_KEY} random ones (such as \
                     the output of openssl rand -hex 32)",
                    key.trim().len()
                ),
            ));
        }
        let captain = self.captain().await?;
        let record = match self.channel(&channel.parse()?).await {
            Ok(record) => record,
            Err(Error::NotFound { .. }) => {
                self.create_channel(
                    &captain,
                    channel,
                    "This host's computer, which other Helm servers use for their channels.",
                )
                .await?
            }
            Err(e) => return Err(e),
        };
        if record.channel.kind == ChannelKind::Home {
            return Err(Error::invalid(
                "computer channel",
                "#main is Skipper's host computer; serve another channel",
            ));
        }
        self.inner
            .served_computer
            .set((record.channel.id, secret::digest(key)))
            .map_err(|_| Error::Conflict("this Helm serves a computer already".into()))?;
        Ok(record)
    }

    /// A channel whose Open Terminal key `actor` manages.
    async fn ot_key_channel(&self, actor: &User, channel: &ChannelRef) -> Result<ChannelRecord> {
        let record = self.visible_channel(actor, channel).await?;
        if !self.manages_channel(actor, &record.channel).await? {
            return Err(Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} manages its Open Terminal key",
                record.channel.name
            )));
        }
        if record.channel.kind == ChannelKind::Home {
            return Err(Error::Refused(format!(
                "{} runs on Skipper's host computer, unconfined; it has no Open Terminal key",
                record.channel.name
            )));
        }
        Ok(record)
    }
}
