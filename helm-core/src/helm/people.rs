//! People management, as the facade offers it: changing a person's role and
//! deactivating or reactivating them, and changing one's own password.
//!
//! Who may do what, kept simple on purpose:
//!
//! - only the Captain changes roles (member ↔ admin);
//! - the Captain and admins deactivate and reactivate members; only the
//!   Captain does so for admins;
//! - the Captain's role and access never change, and nobody deactivates
//!   themselves.
//!
//! A deactivated person's sessions end at once and their API tokens and
//! Open Terminal keys are refused while they stay deactivated; what they
//! wrote stays under their name.

use crate::auth::password;
use crate::error::{Error, Result};
use crate::model::{Actor, Role, User, UserId};
use crate::store::UserChange;

use super::Helm;

/// What to change about a person: either or both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PersonChange {
    /// A new role: `Admin` or `Member`.
    pub role: Option<Role>,
    /// `Some(false)` deactivates, `Some(true)` reactivates.
    pub active: Option<bool>,
}

impl Helm {
    /// Makes `user` an admin or a member. Only the Captain may; the
    /// Captain's own role never changes.
    pub async fn set_role(&self, actor: &User, user: UserId, role: Role) -> Result<User> {
        self.change_person(
            actor,
            user,
            PersonChange {
                role: Some(role),
                active: None,
            },
        )
        .await
    }

    /// Deactivates `user`: they cannot sign in, their sessions end and
    /// their API tokens are refused until they are reactivated.
    pub async fn deactivate_user(&self, actor: &User, user: UserId) -> Result<User> {
        self.set_active(actor, user, false).await
    }

    /// Reactivates a deactivated person (their API tokens work again; they
    /// sign in anew).
    pub async fn reactivate_user(&self, actor: &User, user: UserId) -> Result<User> {
        self.set_active(actor, user, true).await
    }

    async fn set_active(&self, actor: &User, user: UserId, active: bool) -> Result<User> {
        self.change_person(
            actor,
            user,
            PersonChange {
                role: None,
                active: Some(active),
            },
        )
        .await
    }

    /// Changes a person's role and/or whether they are active, checking
    /// both before changing either, and writing both at once.
    pub async fn change_person(
        &self,
        actor: &User,
        user: UserId,
        change: PersonChange,
    ) -> Result<User> {
        if change.role.is_none() && change.active.is_none() {
            return Err(Error::invalid(
                "change",
                "say what to change: a role, or whether the person is active",
            ));
        }
        if !actor.is_active() || !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin changes people's roles and access".into(),
            ));
        }
        let target = self.inner.store.user(user).await?;
        let role_changes = change.role.is_some_and(|role| role != target.role);
        if change.role == Some(Role::Captain) && target.role != Role::Captain {
            return Err(Error::Refused(
                "the workspace has one Captain; make them an admin instead".into(),
            ));
        }
        if target.role == Role::Captain && (role_changes || change.active == Some(false)) {
            return Err(Error::Refused(
                "the Captain's role and access never change".into(),
            ));
        }
        if role_changes && actor.role != Role::Captain {
            return Err(Error::Forbidden("only the Captain changes roles".into()));
        }
        if let Some(active) = change.active {
            if !active && target.id == actor.id {
                return Err(Error::Refused(
                    "nobody deactivates themselves; ask the Captain or another admin".into(),
                ));
            }
            let admin_involved = target.role == Role::Admin || change.role == Some(Role::Admin);
            if admin_involved && actor.role != Role::Captain && target.id != actor.id {
                return Err(Error::Forbidden(
                    "only the Captain deactivates or reactivates admins".into(),
                ));
            }
        }
        let changed = self
            .inner
            .store
            .update_user(
                target.id,
                UserChange {
                    role: change.role,
                    active: change.active,
                    by: Actor::user(actor),
                },
            )
            .await?;
        if changed != target {
            tracing::info!(
                user = %changed.name,
                role = %changed.role,
                active = changed.is_active(),
                by = %actor.name,
                "person changed"
            );
        }
        Ok(changed)
    }

    /// Changes `actor`'s own password, given their current one (so a
    /// session or token left on someone else's screen cannot take the
    /// account); an account with no password yet is given its first
    /// without one. Their other sessions end; `keep` is the session the
    /// change was made from, if it was made from one.
    pub async fn change_own_password(
        &self,
        actor: &User,
        current: Option<&str>,
        new_password: &str,
        keep: Option<i64>,
    ) -> Result<()> {
        let stored = match self.inner.store.user_credentials(&actor.name).await? {
            Some((user, stored)) if user.id == actor.id => stored,
            _ => return Err(Error::not_found("user", actor.id)),
        };
        let (stored, current) = match (stored, current) {
            (None, None) => {
                return self
                    .set_password_keeping(actor, actor.id, new_password, keep)
                    .await;
            }
            (None, Some(_)) => {
                return Err(Error::invalid(
                    "current password",
                    "this account has no password yet",
                ));
            }
            (Some(_), None) => {
                return Err(Error::invalid(
                    "current password",
                    "give the password you sign in with to change it",
                ));
            }
            (Some(stored), Some(current)) => (stored, current),
        };
        password::validate(new_password)?;
        let current = current.to_string();
        let matches = tokio::task::spawn_blocking(move || password::verify(&current, &stored))
            .await
            .map_err(|e| Error::Internal(format!("password check task failed: {e}")))?;
        if !matches {
            return Err(Error::invalid(
                "current password",
                "it does not match; type the password you sign in with",
            ));
        }
        self.set_password_keeping(actor, actor.id, new_password, keep)
            .await
    }
}
