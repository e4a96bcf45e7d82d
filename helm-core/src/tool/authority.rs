//! Skipper's authority, as a narrow service: the cross-channel operations
//! Skipper's tools perform, each for the person a turn runs for and under
//! the same rules the facade applies to that person. Skipper's tools reach
//! the workspace only through this, never through the facade.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::faults::Faults;
use crate::model::{
    Channel, ChannelName, ChannelRef, ChannelStatus, HOME_CHANNEL, ModelChoice, User, Visibility,
};
use crate::runtime::{ModelCheck, Runtime};
use crate::store::{ChannelFilter, ChannelRecord, PolicyScope, Store};
use crate::world::DataRoot;

/// What Skipper may do across the workspace, acting for a person.
pub(crate) struct Authority {
    store: Arc<dyn Store>,
    root: DataRoot,
    faults: Faults,
}

impl Authority {
    pub(crate) fn new(store: Arc<dyn Store>, root: DataRoot, faults: Faults) -> Self {
        Authority {
            store,
            root,
            faults,
        }
    }

    /// Whether `person` may see `channel`; with no person, only public
    /// channels are visible.
    pub(crate) async fn may_see(&self, person: Option<&User>, channel: &Channel) -> Result<bool> {
        match person {
            Some(user) => crate::helm::may_see(self.store.as_ref(), user, channel).await,
            None => Ok(channel.visibility == Visibility::Public),
        }
    }

    /// Whether `person` may see the channel with this id (one that no
    /// longer exists is not visible).
    pub(crate) async fn may_see_id(
        &self,
        person: Option<&User>,
        channel: crate::model::ChannelId,
    ) -> Result<bool> {
        match self.store.channel(&ChannelRef::Id(channel)).await {
            Ok(record) => self.may_see(person, &record.channel).await,
            Err(Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The channel named `name` if `person` may see it; a channel they may
    /// not see does not exist for them (refusals don't leak).
    pub(crate) async fn visible_channel(
        &self,
        person: Option<&User>,
        name: &str,
    ) -> Result<ChannelRecord> {
        let record = self.store.channel(&name.parse::<ChannelRef>()?).await?;
        if self.may_see(person, &record.channel).await? {
            Ok(record)
        } else {
            Err(Error::not_found("channel", name))
        }
    }

    /// The channels `person` may see, by name.
    pub(crate) async fn visible_channels(
        &self,
        person: Option<&User>,
        include_archived: bool,
    ) -> Result<Vec<ChannelRecord>> {
        let all = self
            .store
            .list_channels(ChannelFilter { include_archived })
            .await?;
        let mut visible = Vec::with_capacity(all.len());
        for record in all {
            if self.may_see(person, &record.channel).await? {
                visible.push(record);
            }
        }
        Ok(visible)
    }

    /// `#main`, Skipper's home and host computer.
    pub(crate) async fn home(&self) -> Result<ChannelRecord> {
        self.store
            .channel(&ChannelRef::Name(ChannelName::parse(HOME_CHANNEL)?))
            .await
    }

    /// Creates a channel for `person`, as if they had created it.
    pub(crate) async fn create_channel(
        &self,
        person: &User,
        name: &str,
        purpose: &str,
    ) -> Result<ChannelRecord> {
        crate::helm::provision_channel(
            self.store.as_ref(),
            &self.root,
            &self.faults,
            person,
            crate::helm::NewChannel::new(name, purpose),
        )
        .await
    }

    /// Sets a channel's model for `person`, who must manage the channel;
    /// the choice is checked as any other (`rt` holds the providers).
    pub(crate) async fn set_channel_model(
        &self,
        rt: &Runtime,
        person: &User,
        channel: &ChannelRecord,
        choice: ModelChoice,
    ) -> Result<Option<ModelCheck>> {
        crate::helm::set_model_policy(
            rt,
            person,
            PolicyScope::Channel(channel.channel.id),
            Some(choice),
        )
        .await
    }

    /// Archives a channel for `person`, who must manage it: its agent's work
    /// stops as when they archive it themselves.
    pub(crate) async fn archive_channel(
        &self,
        rt: &Runtime,
        person: &User,
        channel: &ChannelRecord,
    ) -> Result<ChannelRecord> {
        crate::helm::change_status(rt, person, channel, ChannelStatus::Archived).await
    }

    /// Deletes an archived channel for good, as `person` (the Captain or an
    /// admin: whoever approved it), with `confirm` naming it.
    pub(crate) async fn delete_channel(
        &self,
        rt: &Runtime,
        person: &User,
        channel: &ChannelRecord,
        confirm: &str,
    ) -> Result<()> {
        crate::helm::delete_channel(rt, person, channel, confirm).await
    }

    /// A person by id.
    pub(crate) async fn user(&self, id: crate::model::UserId) -> Result<User> {
        self.store.user(id).await
    }
}
