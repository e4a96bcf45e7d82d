//! Channel provisioning and lifecycle, as the facade offers them.

use crate::error::{Error, Result};
use crate::model::{
    Actor, CapabilityPolicy, ChannelName, ChannelRef, ChannelStatus, Handle, ModelChoice,
    ModelPolicy, ResolvedModel, ThreadId, User, Visibility, display_name_for_channel,
    validate_purpose,
};
use crate::store::{ChannelFilter, ChannelPlan, ChannelRecord, PolicyScope, WorldHook};

use super::Helm;
use crate::runtime::ModelCheck;

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
    /// The configured computer its agent's computer runs on (a name from
    /// [`ComputerPlacement::named`](crate::ComputerPlacement)); `None`:
    /// the default. Chosen once: the workspace lives there.
    pub computer: Option<String>,
}

impl NewChannel {
    /// A public channel with a name and a purpose.
    pub fn new(name: impl Into<String>, purpose: impl Into<String>) -> Self {
        NewChannel {
            name: name.into(),
            purpose: purpose.into(),
            visibility: Visibility::Public,
            instructions: String::new(),
            computer: None,
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
        if let Some(name) = &request.computer {
            self.inner.computer.check_choice(name)?;
        }
        let record = provision_channel(
            self.inner.store.as_ref(),
            &self.inner.root,
            &self.inner.faults,
            actor,
            request,
        )
        .await?;
        // Its world was made on this node: with nodes sharing the store,
        // this node holds its computer (asking claims it). Failing that, the
        // first node to use the computer holds it; the channel exists either
        // way.
        let id = record.channel.id;
        if let Err(e) = self.inner.computer.holds(id).await {
            tracing::warn!(channel = %id, error = %e, "could not hold the new channel's computer here");
        }
        Ok(record)
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
        super::lifecycle::change_status(&self.inner.runtime, actor, &record, status).await
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
        super::lifecycle::delete_channel(&self.inner.runtime, actor, &record, confirm).await
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
    /// override and its sessions'. A choice is checked first: its provider
    /// must be registered, a model named (or the provider's default), and
    /// listed by a provider that lists its models; the check says whether
    /// the provider confirmed it or it is unverified. Turns already
    /// accepted keep the model they were given. A channel's choice set
    /// again as it is records nothing and answers no check.
    pub async fn set_model_policy(
        &self,
        actor: &User,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
    ) -> Result<Option<ModelCheck>> {
        set_model_policy(&self.inner.runtime, actor, scope, choice).await
    }
}

/// Whether `actor` may archive, restore or reconfigure `record`: the Captain,
/// admins, and whoever created the channel.
pub(crate) fn may_manage(actor: &User, record: &ChannelRecord) -> Result<()> {
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
        capability_policy: CapabilityPolicy {
            computer: request.computer,
            ..CapabilityPolicy::default()
        },
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

/// Sets or clears a model choice for `actor`, checked first (see
/// [`Helm::set_model_policy`]): what the facade and Skipper's authority
/// both call.
pub(crate) async fn set_model_policy(
    rt: &crate::runtime::Runtime,
    actor: &User,
    scope: PolicyScope,
    choice: Option<ModelChoice>,
) -> Result<Option<ModelCheck>> {
    let store = rt.store.as_ref();
    match scope {
        PolicyScope::Workspace if !actor.role.is_admin() => {
            return Err(Error::Forbidden(
                "only the Captain or an admin sets the workspace model".into(),
            ));
        }
        PolicyScope::Channel(id) => {
            may_manage(actor, &store.channel(&ChannelRef::Id(id)).await?)?;
            // The channel's choice again changes nothing, so nothing is
            // recorded: no event, no activity entry, no provider asked.
            if store.model_policy(id, None).await?.channel == choice {
                return Ok(None);
            }
        }
        _ => {}
    }
    let check = match &choice {
        Some(choice) => Some(rt.check_choice(choice).await?),
        None => None,
    };
    store
        .set_model_policy(scope, choice, Actor::user(actor))
        .await?;
    Ok(check)
}
