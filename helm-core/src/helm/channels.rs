//! Channel provisioning and lifecycle, as the facade offers them.

use crate::error::{Error, Result};
use crate::model::{
    Actor, CapabilityPolicy, ChannelKind, ChannelName, ChannelRef, ChannelStatus, Handle,
    ModelChoice, ModelPolicy, ResolvedModel, ThreadId, User, Visibility, display_name_for_channel,
    validate_purpose,
};
use crate::store::{ChannelFilter, ChannelPlan, ChannelRecord, PolicyScope, WorldHook};

use super::Helm;

/// What a person asks for when creating a channel. Only the name and the
/// purpose are needed; everything else has a sensible default.
#[derive(Debug, Clone)]
pub struct NewChannel {
    /// The name, as typed (`launch` or `#launch`).
    pub name: String,
    /// What the channel is for.
    pub purpose: String,
    /// Public (default) or private.
    pub visibility: Visibility,
    /// Extra operating instructions for the resident agent.
    pub instructions: String,
}

impl NewChannel {
    /// A public channel with a name and a purpose.
    pub fn new(name: impl Into<String>, purpose: impl Into<String>) -> Self {
        NewChannel {
            name: name.into(),
            purpose: purpose.into(),
            visibility: Visibility::Public,
            instructions: String::new(),
        }
    }
}

impl Helm {
    /// Creates a channel with its resident agent, workspace, memory namespace
    /// and inherited model policy, as one atomic operation: either all of it
    /// exists afterwards, or none of it does and a retry is safe.
    pub async fn create_channel(
        &self,
        actor: &User,
        name: &str,
        purpose: &str,
    ) -> Result<ChannelRecord> {
        self.create_channel_with(actor, NewChannel::new(name, purpose))
            .await
    }

    /// [`Helm::create_channel`] with every option.
    pub async fn create_channel_with(
        &self,
        actor: &User,
        request: NewChannel,
    ) -> Result<ChannelRecord> {
        provision_channel(
            self.inner.store.as_ref(),
            &self.inner.root,
            &self.inner.faults,
            actor,
            request,
        )
        .await
    }

    /// A channel with its agent.
    pub async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord> {
        self.inner.store.channel(channel).await
    }

    /// Channels by name; archived ones only if asked.
    pub async fn channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
        self.inner.store.list_channels(filter).await
    }

    /// Archives a channel: its agent is paused and everything is kept.
    pub async fn archive_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<ChannelRecord> {
        self.change_status(actor, channel, ChannelStatus::Archived)
            .await
    }

    /// Restores an archived channel with the same agent, profile, workspace
    /// and memory.
    pub async fn restore_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<ChannelRecord> {
        self.change_status(actor, channel, ChannelStatus::Active)
            .await
    }

    async fn change_status(
        &self,
        actor: &User,
        channel: &ChannelRef,
        status: ChannelStatus,
    ) -> Result<ChannelRecord> {
        let record = self.channel(channel).await?;
        may_manage(actor, &record)?;
        let record = self
            .inner
            .store
            .set_channel_status(record.channel.id, status, Actor::user(actor))
            .await?;
        self.inner
            .root
            .world(record.channel.id)
            .write_profile(&record)?;
        if status == ChannelStatus::Archived {
            // A paused agent's computer keeps its files but runs nothing.
            if let Err(e) = self.terminals().close_channel(record.channel.id).await {
                tracing::warn!(channel = %record.channel.name, error = %e, "could not close a terminal");
            }
        }
        Ok(record)
    }

    /// Permanently deletes an archived channel and its agent world: rows and
    /// the on-disk tree. `confirm` must name the channel.
    pub async fn delete_channel(
        &self,
        actor: &User,
        channel: &ChannelRef,
        confirm: &str,
    ) -> Result<()> {
        let record = self.channel(channel).await?;
        if record.channel.kind == ChannelKind::Home {
            return Err(Error::Refused(format!(
                "{} is Skipper's home and cannot be deleted",
                record.channel.name
            )));
        }
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin deletes a channel permanently".into(),
            ));
        }
        let confirmed = ChannelName::parse(confirm)
            .map(|c| c == record.channel.name)
            .unwrap_or(false);
        if !confirmed {
            return Err(Error::Refused(format!(
                "deleting {name} removes its agent, workspace, memory and history for good; \
                 confirm by naming it: --confirm {bare}",
                name = record.channel.name,
                bare = record.channel.name.as_str()
            )));
        }
        let root = self.inner.root.clone();
        let trashed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let trashed_in_hook = trashed.clone();
        let world: WorldHook = Box::new(move |record| {
            let moved = root.trash(&root.world(record.channel.id))?;
            if let Ok(mut slot) = trashed_in_hook.lock() {
                *slot = moved;
            }
            Ok(())
        });
        let outcome = self
            .inner
            .store
            .delete_channel(record.channel.id, Actor::user(actor), world)
            .await;
        let moved = trashed.lock().ok().and_then(|mut slot| slot.take());
        if outcome.is_ok() {
            self.inner.runtime.embedder_tools.forget(record.channel.id);
        }
        match (outcome, moved) {
            (Ok(()), Some(path)) => {
                if let Err(e) = std::fs::remove_dir_all(&path) {
                    // The rows are gone; the trash is swept at the next open.
                    tracing::warn!(path = %path.display(), error = %e, "could not empty the trash");
                }
                Ok(())
            }
            (Ok(()), None) => Ok(()),
            (Err(e), Some(path)) => {
                // The transaction rolled back: put the world back where it was.
                let back = self.inner.root.world(record.channel.id);
                if let Err(undo) = std::fs::rename(&path, back.root()) {
                    tracing::error!(from = %path.display(), error = %undo, "could not restore a world after a failed delete");
                }
                Err(e)
            }
            (Err(e), None) => Err(e),
        }
    }

    /// The model that will serve the next turn in `channel` (and `thread`).
    pub async fn resolve_model(
        &self,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
    ) -> Result<Option<ResolvedModel>> {
        Ok(self.model_policy(channel, thread).await?.resolve())
    }

    /// The model choices at every level for a turn in `channel`.
    pub async fn model_policy(
        &self,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy> {
        let record = self.channel(channel).await?;
        let mut policy = self
            .inner
            .store
            .model_policy(record.channel.id, thread)
            .await?;
        policy.fallback = self.inner.fallback_model.clone();
        Ok(policy)
    }

    /// Sets or clears (with `None`) the model choice at one level. The Captain
    /// and admins set the workspace default; a channel's managers set its
    /// override and its sessions'.
    pub async fn set_model_policy(
        &self,
        actor: &User,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
    ) -> Result<()> {
        set_model_policy(self.inner.store.as_ref(), actor, scope, choice).await
    }
}

/// Whether `actor` may archive, restore or reconfigure `record`: the Captain,
/// admins, and whoever created the channel.
fn may_manage(actor: &User, record: &ChannelRecord) -> Result<()> {
    if actor.role.is_admin() || record.channel.created_by == actor.id {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "only the Captain, an admin or its creator manages {}",
            record.channel.name
        )))
    }
}

/// Provisions a channel for `actor` (see [`Helm::create_channel`]): what
/// the facade and Skipper's authority both call.
pub(crate) async fn provision_channel(
    store: &dyn crate::store::Store,
    root: &crate::world::DataRoot,
    faults: &crate::faults::Faults,
    actor: &User,
    request: NewChannel,
) -> Result<ChannelRecord> {
    let name = ChannelName::parse(&request.name)?;
    let purpose = validate_purpose(&request.purpose)?;
    let plan = ChannelPlan {
        handle: Handle::for_channel(&name, None),
        display_name: display_name_for_channel(&name),
        announcement: format!(
            "{{handle}} is ready. This channel is about: {purpose}\n\nMention {{handle}} \
             to start a thread; mention @skipper for anything outside this channel."
        ),
        name,
        purpose,
        visibility: request.visibility,
        created_by: actor.clone(),
        instructions: request.instructions,
        capability_policy: CapabilityPolicy::default(),
    };
    let root = root.clone();
    let faults = faults.clone();
    let world: WorldHook = Box::new(move |record| {
        faults.check(crate::faults::FaultPoint::BeforeWorld)?;
        root.create_world(record, &faults).map(|_| ())
    });
    let record = store.provision_channel(plan, world).await?;
    tracing::info!(
        channel = %record.channel.name,
        agent = %record.agent.handle,
        "channel provisioned"
    );
    Ok(record)
}

/// Sets or clears a model choice for `actor` (see [`Helm::set_model_policy`]).
pub(crate) async fn set_model_policy(
    store: &dyn crate::store::Store,
    actor: &User,
    scope: PolicyScope,
    choice: Option<ModelChoice>,
) -> Result<()> {
    match scope {
        PolicyScope::Workspace if !actor.role.is_admin() => {
            return Err(Error::Forbidden(
                "only the Captain or an admin sets the workspace model".into(),
            ));
        }
        PolicyScope::Channel(id) => {
            may_manage(actor, &store.channel(&ChannelRef::Id(id)).await?)?;
        }
        _ => {}
    }
    if let Some(choice) = &choice
        && choice.provider.trim().is_empty()
    {
        return Err(Error::invalid("provider", "name a provider"));
    }
    store.set_model_policy(scope, choice).await
}
