//! The [`WorkspaceStore`] port: the workspace, its people and its model
//! providers.

use async_trait::async_trait;

use crate::error::Result;
use crate::model::{User, UserId, Workspace};
use crate::provider::ProviderConfig;
use crate::store::types::{Bootstrap, BootstrapPlan, NewUser, StoreStats, WorldHook};

/// The workspace, its people and its model providers.
#[async_trait]
pub trait WorkspaceStore: Send + Sync + 'static {
    /// Creates the workspace, the Captain, `#main` and Skipper if they do not
    /// exist yet; returns what exists either way. Idempotent.
    async fn bootstrap(&self, plan: BootstrapPlan, world: WorldHook) -> Result<Bootstrap>;

    /// The workspace, if bootstrapped.
    async fn workspace(&self) -> Result<Option<Workspace>>;

    /// Renames the workspace; emits `workspace.updated`.
    async fn rename_workspace(&self, name: String) -> Result<Workspace>;

    /// Adds a user.
    async fn insert_user(&self, user: NewUser) -> Result<User>;

    /// A user by id.
    async fn user(&self, id: UserId) -> Result<User>;

    /// A user by name.
    async fn user_by_name(&self, name: &str) -> Result<User>;

    /// Every user, oldest first.
    async fn list_users(&self) -> Result<Vec<User>>;

    /// Adds a provider to the registry, or replaces the one of that name.
    async fn put_provider(&self, config: ProviderConfig) -> Result<()>;

    /// A provider by name.
    async fn provider(&self, name: &str) -> Result<ProviderConfig>;

    /// Every provider, by name.
    async fn providers(&self) -> Result<Vec<ProviderConfig>>;

    /// Counts of what the store holds.
    async fn stats(&self) -> Result<StoreStats>;
}
