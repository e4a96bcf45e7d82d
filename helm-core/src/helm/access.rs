//! Who may see and manage what.
//!
//! - A public channel is open to everyone in the workspace; a private one
//!   only to its members, the Captain and admins. To anyone else a private
//!   channel does not exist: asking for it is `not found`, not `forbidden`,
//!   so its name and contents never leak, and neither do its threads,
//!   messages, activity or events.
//! - A channel is managed (archived, restored, edited, its members and model
//!   changed) by the Captain, admins, its creator and its owners.
//! - Events follow their channel: an [`Audience`] decides, event by event,
//!   what one person's live stream carries.
//! - What reaches an agent's context (recalled memory, pinned records,
//!   other threads' and channels' text) is filtered by an [`Audience`] too:
//!   the one of the turn ([`Audience::for_turn`]), which the recall engine
//!   takes as a required argument, so no runtime path can read unfiltered.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::events::{Event, EventBody};
use crate::model::{
    Actor, Channel, ChannelId, ChannelName, ChannelRef, Member, MemberRole, Message, MessageId,
    Thread, ThreadId, User, UserId, Visibility, validate_purpose,
};
use crate::store::{ChannelFilter, ChannelRecord, ChannelUpdate, Store};

use super::Helm;

/// The longest operating instructions accepted, in bytes.
pub const MAX_INSTRUCTIONS: usize = 16 * 1024;

/// What one person may see of the event log, as of when it was computed.
/// Refresh it (with [`Helm::audience`]) after an event for which
/// [`Audience::changes_with`] is true.
#[derive(Debug, Clone)]
pub struct Audience {
    user: UserId,
    everything: bool,
    visible: HashSet<ChannelId>,
}

impl Audience {
    /// An audience that sees everything: for the operator working on a data
    /// directory directly (the CLI without a server), who can read the
    /// database anyway. Never for an agent's turn.
    pub fn operator() -> Self {
        Audience {
            user: UserId(0),
            everything: true,
            visible: HashSet::new(),
        }
    }

    /// What one person may see right now: every channel for the Captain and
    /// admins; public channels and their own private ones for a member.
    pub(crate) async fn of_person(store: &dyn Store, person: &User) -> Result<Self> {
        let everything = person.role.is_admin();
        let visible = if everything {
            HashSet::new()
        } else {
            store
                .visible_channel_ids(person.id)
                .await?
                .into_iter()
                .collect()
        };
        Ok(Audience {
            user: person.id,
            everything,
            visible,
        })
    }

    /// What an agent's turn in `channel` may put in its context: what the
    /// person it works for may see (public channels only when no person
    /// asked), narrowed to what every reader of the channel may see too,
    /// because the reply lands in a thread they all read. A private
    /// channel's records shared with the workspace therefore reach another
    /// channel's agent only when the asker and everyone in that channel may
    /// see the private one.
    pub(crate) async fn for_turn(
        store: &dyn Store,
        asker: Option<&User>,
        channel: &Channel,
    ) -> Result<Self> {
        let mut audience = match asker {
            Some(person) => Self::of_person(store, person).await?,
            None => Audience {
                user: UserId(0),
                everything: false,
                visible: store
                    .list_channels(ChannelFilter {
                        include_archived: true,
                    })
                    .await?
                    .into_iter()
                    .filter(|r| r.channel.visibility == Visibility::Public)
                    .map(|r| r.channel.id)
                    .collect(),
            },
        };
        let readers: Vec<User> = if channel.visibility == Visibility::Public {
            store.list_users().await?
        } else {
            store
                .channel_members(channel.id)
                .await?
                .into_iter()
                .map(|m| m.user)
                .collect()
        };
        // The asker's own view is in the audience already (unless they see
        // everything); admins see everything, so they narrow nothing.
        let others: Vec<UserId> = readers
            .iter()
            .filter(|u| !u.role.is_admin())
            .filter(|u| audience.everything || Some(u.id) != asker.map(|a| a.id))
            .map(|u| u.id)
            .collect();
        if others.is_empty() {
            return Ok(audience);
        }
        // One read for all of them: a turn in a channel of many readers
        // must not cost a read per reader.
        let theirs: HashSet<ChannelId> =
            store.channels_all_see(others).await?.into_iter().collect();
        audience.visible = if audience.everything {
            theirs
        } else {
            audience.visible.intersection(&theirs).copied().collect()
        };
        audience.everything = false;
        Ok(audience)
    }

    /// Whether the person may see this channel.
    pub fn sees_channel(&self, channel: ChannelId) -> bool {
        self.everything || self.visible.contains(&channel)
    }

    /// Whether the person may see this event.
    pub fn may_see(&self, event: &Event) -> bool {
        // What one person read and who is mentioned are theirs alone, even
        // for the Captain and admins.
        if let EventBody::ChannelRead { user_id, .. } | EventBody::MentionCreated { user_id, .. } =
            &event.body
        {
            return *user_id == self.user && event.channel_id.is_none_or(|c| self.sees_channel(c));
        }
        if self.everything {
            return true;
        }
        match (&event.body, event.channel_id) {
            // A deletion says a channel's name; only those who could see it
            // learn that it is gone.
            (EventBody::ChannelDeleted { id, .. }, _) => self.visible.contains(id),
            // Someone just removed from a channel still hears that they were.
            (EventBody::ChannelMemberRemoved { user_id, .. }, _) if *user_id == self.user => true,
            (_, Some(channel)) => self.visible.contains(&channel),
            (_, None) => true,
        }
    }

    /// Whether this event may change what the person sees (a channel came
    /// or went, someone joined or left one).
    pub fn changes_with(event: &Event) -> bool {
        matches!(
            event.body,
            EventBody::ChannelCreated { .. }
                | EventBody::ChannelDeleted { .. }
                | EventBody::ChannelMemberAdded { .. }
                | EventBody::ChannelMemberRemoved { .. }
                | EventBody::UserUpdated { .. }
        )
    }
}

/// Whether `actor` may see `channel`: public channels are open to all,
/// private ones to their members, the Captain and admins.
pub(crate) async fn may_see(
    store: &dyn crate::store::Store,
    actor: &User,
    channel: &Channel,
) -> Result<bool> {
    if actor.role.is_admin() || channel.visibility == Visibility::Public {
        return Ok(true);
    }
    Ok(store
        .channel_members(channel.id)
        .await?
        .iter()
        .any(|m| m.user.id == actor.id))
}

/// Whether `actor` manages the channel: the Captain, admins, its creator and
/// its owners.
fn manages(actor: &User, channel: &Channel, members: &[Member]) -> bool {
    actor.role.is_admin()
        || channel.created_by == actor.id
        || members
            .iter()
            .any(|m| m.user.id == actor.id && m.role == MemberRole::Owner)
}

impl Helm {
    /// What `actor` may see of the event log right now.
    pub async fn audience(&self, actor: &User) -> Result<Audience> {
        Audience::of_person(self.inner.store.as_ref(), actor).await
    }

    /// Whether `actor` may see `channel`.
    pub async fn may_see(&self, actor: &User, channel: &Channel) -> Result<bool> {
        may_see(self.inner.store.as_ref(), actor, channel).await
    }

    /// A channel `actor` may see; a hidden one is `not found`.
    pub async fn visible_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<ChannelRecord> {
        let record = self.channel(channel).await?;
        if self.may_see(actor, &record.channel).await? {
            Ok(record)
        } else {
            Err(Error::not_found("channel", channel))
        }
    }

    /// The channels `actor` may see, by name.
    pub async fn visible_channels(
        &self,
        actor: &User,
        filter: ChannelFilter,
    ) -> Result<Vec<ChannelRecord>> {
        let all = self.channels(filter).await?;
        let audience = self.audience(actor).await?;
        Ok(all
            .into_iter()
            .filter(|r| audience.sees_channel(r.channel.id))
            .collect())
    }

    /// A thread in a channel `actor` may see, with that channel; otherwise
    /// `not found`.
    pub async fn visible_thread(
        &self,
        actor: &User,
        thread: ThreadId,
    ) -> Result<(Thread, ChannelRecord)> {
        let found = self.thread(thread).await?;
        match self
            .visible_channel(actor, &ChannelRef::Id(found.channel_id))
            .await
        {
            Ok(record) => Ok((found, record)),
            Err(Error::NotFound { .. }) => Err(Error::not_found("thread", thread)),
            Err(e) => Err(e),
        }
    }

    /// The members of a channel `actor` may see.
    pub async fn channel_members(&self, actor: &User, channel: &ChannelRef) -> Result<Vec<Member>> {
        let record = self.visible_channel(actor, channel).await?;
        self.inner.store.channel_members(record.channel.id).await
    }

    /// Adds a person to a channel. Its managers add people; an owner role is
    /// theirs to give.
    pub async fn add_channel_member(
        &self,
        actor: &User,
        channel: &ChannelRef,
        user: UserId,
        role: MemberRole,
    ) -> Result<Member> {
        let record = self.visible_channel(actor, channel).await?;
        let members = self.inner.store.channel_members(record.channel.id).await?;
        if !manages(actor, &record.channel, &members) {
            return Err(Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} adds people to it",
                record.channel.name
            )));
        }
        self.inner
            .store
            .add_channel_member(record.channel.id, user, role, Actor::user(actor))
            .await
    }

    /// Removes a person from a channel: its managers remove anyone, and
    /// anyone may leave.
    pub async fn remove_channel_member(
        &self,
        actor: &User,
        channel: &ChannelRef,
        user: UserId,
    ) -> Result<()> {
        let record = self.visible_channel(actor, channel).await?;
        let members = self.inner.store.channel_members(record.channel.id).await?;
        if actor.id != user && !manages(actor, &record.channel, &members) {
            return Err(Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} removes people from it",
                record.channel.name
            )));
        }
        self.inner
            .store
            .remove_channel_member(record.channel.id, user, Actor::user(actor))
            .await
    }

    /// Whether `actor` manages `channel` (archives, edits, sets its model).
    pub async fn manages_channel(&self, actor: &User, channel: &Channel) -> Result<bool> {
        if actor.role.is_admin() || channel.created_by == actor.id {
            return Ok(true);
        }
        let members = self.inner.store.channel_members(channel.id).await?;
        Ok(manages(actor, channel, &members))
    }

    /// Renames a channel, or changes its purpose (its agent's too) or its
    /// agent's operating instructions. Its agent (handle included),
    /// memory, files and history stay. A new name must be free among live
    /// channels; `#main` keeps its name.
    pub async fn update_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
        update: ChannelUpdate,
    ) -> Result<ChannelRecord> {
        let record = self.visible_channel(actor, channel).await?;
        if !self.manages_channel(actor, &record.channel).await? {
            return Err(Error::Forbidden(format!(
                "only the Captain, an admin or an owner of {} changes it",
                record.channel.name
            )));
        }
        let purpose = update
            .purpose
            .as_deref()
            .map(validate_purpose)
            .transpose()?;
        if let Some(instructions) = &update.instructions
            && instructions.len() > MAX_INSTRUCTIONS
        {
            return Err(Error::invalid(
                "instructions",
                format!("keep them under {MAX_INSTRUCTIONS} bytes"),
            ));
        }
        let name = update
            .name
            .as_deref()
            .map(|n| ChannelName::parse(n).map(|n| n.as_str().to_string()))
            .transpose()?;
        if name.is_none() && purpose.is_none() && update.instructions.is_none() {
            return Err(Error::invalid(
                "channel update",
                "change the name, the purpose, the instructions, or several of them",
            ));
        }
        let record = self
            .inner
            .store
            .update_channel(
                record.channel.id,
                ChannelUpdate {
                    name,
                    purpose,
                    instructions: update.instructions,
                },
                Actor::user(actor),
            )
            .await?;
        self.inner.runtime.mirror_profile(record.channel.id).await?;
        Ok(record)
    }

    /// A page of messages of a channel `actor` may see (or of one of its
    /// threads), after the message `after`, oldest first.
    pub async fn messages_page(
        &self,
        actor: &User,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let record = self.visible_channel(actor, channel).await?;
        self.inner
            .store
            .messages_page(record.channel.id, thread, after, limit)
            .await
    }
}
