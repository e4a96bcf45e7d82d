//! What the cases build on: a bootstrapped workspace and the plans that
//! provision channels and post messages, as the facade would make them.

use helm_core::model::{
    Actor, CapabilityPolicy, ChannelName, Handle, PolicyLevel, Role, ThreadId, TurnModel,
    TurnState, User, Visibility,
};
use helm_core::provider::Usage;
use helm_core::store::{
    Admission, AdmissionModel, Bootstrap, BootstrapPlan, ChannelPlan, ChannelRecord,
    InviteAcceptance, NewInvite, NewPost, Posted, Store, TurnFinish, WorldHook,
};

/// A bootstrapped store with its Captain.
pub struct Fixture<'s> {
    /// The store.
    pub store: &'s dyn Store,
    /// What bootstrap made.
    pub boot: Bootstrap,
}

/// The bootstrap plan every case uses.
pub fn bootstrap_plan() -> BootstrapPlan {
    BootstrapPlan {
        workspace_name: "Conformance".into(),
        captain_name: "captain".into(),
        home_purpose: "Where Skipper lives.".into(),
        skipper_instructions: "Keep the workspace in order.".into(),
    }
}

/// A world hook that does nothing and succeeds.
pub fn no_world() -> WorldHook {
    Box::new(|_| Ok(()))
}

/// A world hook that fails, as a full disk would.
pub fn failing_world() -> WorldHook {
    Box::new(|_| {
        Err(helm_core::Error::Internal(
            "the world could not be made".into(),
        ))
    })
}

/// How a turn is admitted in the cases: a fixed model, capacity 1.
pub fn admission() -> Admission {
    Admission {
        model: AdmissionModel::Chosen(TurnModel {
            provider: "mock".into(),
            model: "mock-1".into(),
            level: PolicyLevel::Workspace,
        }),
        capacity: 1,
    }
}

/// A turn's end: completed in one step with `reply`.
pub fn completed(reply: &str) -> TurnFinish {
    TurnFinish {
        state: TurnState::Completed,
        reply: reply.into(),
        error: None,
        note: None,
        steps: 1,
        usage: Usage::default(),
    }
}

impl<'s> Fixture<'s> {
    /// Bootstraps the store.
    pub async fn new(store: &'s dyn Store) -> anyhow::Result<Self> {
        let boot = store.bootstrap(bootstrap_plan(), no_world()).await?;
        Ok(Fixture { store, boot })
    }

    /// The Captain.
    pub fn captain(&self) -> &User {
        &self.boot.captain
    }

    /// The Captain as an actor.
    pub fn actor(&self) -> Actor {
        Actor::user(&self.boot.captain)
    }

    /// A plan for a public channel named `name`, made by the Captain.
    pub fn plan(&self, name: &str) -> anyhow::Result<ChannelPlan> {
        let name = ChannelName::parse(name)?;
        Ok(ChannelPlan {
            handle: Handle::for_channel(&name, None),
            display_name: format!("{name} agent"),
            announcement: "{handle} is ready.".into(),
            name,
            purpose: "Conformance work.".into(),
            visibility: Visibility::Public,
            created_by: self.boot.captain.clone(),
            instructions: String::new(),
            capability_policy: CapabilityPolicy::default(),
        })
    }

    /// Provisions a channel named `name`.
    pub async fn channel(&self, name: &str) -> anyhow::Result<ChannelRecord> {
        Ok(self
            .store
            .provision_channel(self.plan(name)?, no_world())
            .await?)
    }

    /// A member who joined by an invitation of the Captain's.
    pub async fn member(&self, name: &str) -> anyhow::Result<User> {
        let secret = format!("invite-of-{name}");
        self.store
            .insert_invite(NewInvite {
                secret_hash: secret.clone(),
                role: Role::Member,
                created_by: self.captain().id,
                expires: jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1),
            })
            .await?;
        Ok(self
            .store
            .accept_invite(InviteAcceptance {
                secret_hash: secret,
                name: name.into(),
                display_name: name.into(),
                password_hash: "$argon2id$not-checked-here".into(),
            })
            .await?)
    }

    /// The Captain posts `text` in `channel` (in `thread`, or a new one);
    /// with `wake`, the post mentions the resident agent and admits a turn.
    pub async fn post(
        &self,
        channel: &ChannelRecord,
        thread: Option<ThreadId>,
        text: &str,
        wake: bool,
    ) -> anyhow::Result<Posted> {
        self.post_as(self.captain(), channel, thread, text, wake)
            .await
    }

    /// `author` posts `text`, as [`Fixture::post`] does for the Captain.
    pub async fn post_as(
        &self,
        author: &User,
        channel: &ChannelRecord,
        thread: Option<ThreadId>,
        text: &str,
        wake: bool,
    ) -> anyhow::Result<Posted> {
        Ok(self
            .store
            .post_message(NewPost {
                channel_id: channel.channel.id,
                thread_id: thread,
                author: author.clone(),
                content: text.to_string(),
                resident: channel.agent.clone(),
                mentions_resident: wake,
                calls_skipper: false,
                admission: admission(),
            })
            .await?)
    }
}
