//! Signing in, as the facade offers it: first-run setup, passwords, sessions,
//! API tokens and invitations. Every secret is made here, handed back once
//! in an [`Issued`], and stored only as its hash.

use std::sync::OnceLock;
use std::time::Duration;

use jiff::Timestamp;

use crate::auth::{ApiToken, Credential, Invite, Issued, Principal, Session, password, secret};
use crate::error::{Error, Result};
use crate::model::{Role, User, UserId, validate_new_user_name, validate_user_name};
use crate::store::{CaptainSetup, InviteAcceptance, NewApiToken, NewInvite};

use super::Helm;

/// The longest an invitation may stay open.
pub const MAX_INVITE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// The longest display name accepted, in characters.
const MAX_DISPLAY_NAME: usize = 80;
/// The longest API token name accepted, in characters.
const MAX_TOKEN_NAME: usize = 100;

/// What a person chooses when they set up an account (first-run setup or an
/// invitation).
#[derive(Debug, Clone)]
pub struct AccountRequest {
    /// The login and mention name.
    pub name: String,
    /// The shown name; the login name when empty.
    pub display_name: Option<String>,
    /// The password.
    pub password: String,
}

impl AccountRequest {
    /// Validates the names and password and hashes the password (slow: on a
    /// blocking thread). Returns (name, display name, password hash).
    async fn prepare(self) -> Result<(String, String, String)> {
        validate_new_user_name(&self.name)?;
        let display = display_name(self.display_name.as_deref(), &self.name)?;
        password::validate(&self.password)?;
        let hash = hash_blocking(self.password).await?;
        Ok((self.name, display, hash))
    }
}

fn display_name(given: Option<&str>, name: &str) -> Result<String> {
    let display = given
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(name);
    if display.chars().count() > MAX_DISPLAY_NAME || display.chars().any(char::is_control) {
        return Err(Error::invalid(
            "display name",
            format!("use at most {MAX_DISPLAY_NAME} characters and no control characters"),
        ));
    }
    Ok(display.to_string())
}

impl Helm {
    /// Refuses a display name that would pass for someone else: Skipper,
    /// Helm, a resident agent, the Captain, or another person (by their
    /// login or display name), whatever the case and with or without `@`.
    /// A name shown in the feed is how people tell who spoke.
    async fn check_display_name_is_free(&self, name: &str, display: &str) -> Result<()> {
        let wanted = display.trim().trim_start_matches('@').to_lowercase();
        let taken_by = |who: &str| {
            Err(Error::invalid(
                "display name",
                format!("{display:?} would pass for {who}; choose a name of your own"),
            ))
        };
        match wanted.as_str() {
            "skipper" => return taken_by("Skipper"),
            "helm" => return taken_by("Helm"),
            "captain" | "the captain" => return taken_by("the Captain"),
            w if w.ends_with("-agent") => {
                return taken_by("a resident agent");
            }
            _ => {}
        }
        for user in self.inner.store.list_users().await? {
            if user.name == name {
                continue;
            }
            if user.name.to_lowercase() == wanted
                || user.display_name.trim().to_lowercase() == wanted
            {
                return taken_by(&format!("{} ({})", user.display_name, user.name));
            }
        }
        Ok(())
    }
}

async fn hash_blocking(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || password::hash(&password))
        .await
        .map_err(|e| Error::Internal(format!("password hashing task failed: {e}")))?
}

async fn verify_blocking(password: String, stored: String) -> Result<bool> {
    tokio::task::spawn_blocking(move || password::verify(&password, &stored))
        .await
        .map_err(|e| Error::Internal(format!("password check task failed: {e}")))
}

/// A hash that matches no password, checked when the account does not exist
/// or has no password, so a wrong name takes as long as a wrong password.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| password::hash("helm decoy password").unwrap_or_default())
}

fn after(ttl: Duration) -> Result<Timestamp> {
    let span = jiff::SignedDuration::try_from(ttl)
        .map_err(|_| Error::invalid("duration", "it is too long"))?;
    Timestamp::now()
        .checked_add(span)
        .map_err(|_| Error::invalid("duration", "it is too long"))
}

fn wrong_credentials() -> Error {
    Error::Unauthenticated("wrong name or password".into())
}

/// Refuses a deactivated person, whichever credential they hold.
fn refuse_deactivated(user: &User) -> Result<()> {
    if user.is_active() {
        return Ok(());
    }
    Err(Error::Deactivated(format!(
        "the account @{} is deactivated; ask the Captain or an admin to reactivate it",
        user.name
    )))
}

impl Helm {
    /// Whether first-run setup still has to name the Captain and set their
    /// password.
    pub async fn setup_needed(&self) -> Result<bool> {
        Ok(!self.inner.store.setup_done().await?)
    }

    /// Completes first-run setup: the Captain that `init` made gets its name,
    /// display name and password. Works exactly once.
    pub async fn complete_setup(&self, request: AccountRequest) -> Result<User> {
        if !self.setup_needed().await? {
            return Err(Error::Conflict(
                "setup is already complete; sign in as the Captain".into(),
            ));
        }
        let (name, display_name, password_hash) = request.prepare().await?;
        let captain = self
            .inner
            .store
            .complete_setup(CaptainSetup {
                name,
                display_name,
                password_hash,
            })
            .await?;
        tracing::info!(captain = %captain.name, "setup complete");
        Ok(captain)
    }

    /// Checks a name and password and opens a session lasting `ttl`.
    pub async fn login(
        &self,
        name: &str,
        password: &str,
        ttl: Duration,
    ) -> Result<(User, Issued<Session>)> {
        let found = if validate_user_name(name).is_ok() {
            self.inner.store.user_credentials(name).await?
        } else {
            None
        };
        let (user, stored) = match found {
            Some((user, Some(hash))) => (Some(user), hash),
            _ => (None, decoy_hash().to_string()),
        };
        let matches = verify_blocking(password.to_string(), stored).await?;
        match user {
            Some(user) if matches => {
                // Said only to someone who knows the password.
                refuse_deactivated(&user)?;
                let session = self.start_session(&user, ttl).await?;
                tracing::info!(user = %user.name, "signed in");
                Ok((user, session))
            }
            _ => Err(wrong_credentials()),
        }
    }

    /// Opens a session for a person who just proved who they are (signed in,
    /// finished setup, accepted an invitation).
    pub async fn start_session(&self, user: &User, ttl: Duration) -> Result<Issued<Session>> {
        refuse_deactivated(user)?;
        let secret = secret::generate(secret::SESSION_PREFIX)?;
        let record = self
            .inner
            .store
            .insert_session(user.id, secret::digest(&secret), after(ttl)?)
            .await?;
        Ok(Issued { record, secret })
    }

    /// Who a secret (a session id or an API token) belongs to.
    pub async fn authenticate(&self, presented: &str) -> Result<Principal> {
        let store = &self.inner.store;
        if secret::looks_like(presented, secret::SESSION_PREFIX)
            && let Some((session, user)) = store.session_user(&secret::digest(presented)).await?
        {
            refuse_deactivated(&user)?;
            return Ok(Principal {
                user,
                via: Credential::Session(session.id),
            });
        }
        if secret::looks_like(presented, secret::TOKEN_PREFIX)
            && let Some((token, user)) = store.api_token_user(&secret::digest(presented)).await?
        {
            refuse_deactivated(&user)?;
            return Ok(Principal {
                user,
                via: Credential::Token(token.id),
            });
        }
        // Say which it was taken for: a session is renewed by signing in,
        // a token by making a new one.
        Err(Error::Unauthenticated(
            if secret::looks_like(presented, secret::SESSION_PREFIX) {
                "the session is unknown or expired; sign in again"
            } else {
                "the API token is unknown, expired or revoked; use a current one, or make a \
                 new one"
            }
            .into(),
        ))
    }

    /// Ends the session with this secret (a no-op for an unknown one).
    pub async fn logout(&self, session_secret: &str) -> Result<()> {
        if secret::looks_like(session_secret, secret::SESSION_PREFIX) {
            self.inner
                .store
                .delete_session(&secret::digest(session_secret))
                .await?;
        }
        Ok(())
    }

    /// Sets a password. People set their own; the Captain and admins may set
    /// one for an account that has none yet (people added from the command
    /// line), never replace someone else's. The account's sessions end.
    pub async fn set_password(&self, actor: &User, user: UserId, new_password: &str) -> Result<()> {
        self.set_password_keeping(actor, user, new_password, None)
            .await
    }

    /// [`Helm::set_password`], keeping session `keep` (the one the change
    /// was made from) while the account's others end.
    pub(super) async fn set_password_keeping(
        &self,
        actor: &User,
        user: UserId,
        new_password: &str,
        keep: Option<i64>,
    ) -> Result<()> {
        let target = self.inner.store.user(user).await?;
        if actor.id != target.id {
            let has_one = matches!(
                self.inner.store.user_credentials(&target.name).await?,
                Some((_, Some(_)))
            );
            if !actor.role.is_admin() || has_one || target.role == Role::Captain {
                return Err(Error::Forbidden(
                    "people set their own passwords; an admin may only give a first password \
                     to an account that has none"
                        .into(),
                ));
            }
        }
        password::validate(new_password)?;
        let hash = hash_blocking(new_password.to_string()).await?;
        self.inner
            .store
            .set_password_hash(user, Some(hash), keep)
            .await
    }

    /// Makes an API token for `actor`, acting as them until `expires`.
    pub async fn create_api_token(
        &self,
        actor: &User,
        name: &str,
        expires: Option<Duration>,
    ) -> Result<Issued<ApiToken>> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_TOKEN_NAME
            || name.chars().any(char::is_control)
        {
            return Err(Error::invalid(
                "token name",
                format!("say what it is for in 1 to {MAX_TOKEN_NAME} characters"),
            ));
        }
        let secret = secret::generate(secret::TOKEN_PREFIX)?;
        let expires = expires.map(after).transpose()?;
        let record = self
            .inner
            .store
            .insert_api_token(NewApiToken {
                user_id: actor.id,
                name: name.to_string(),
                secret_hash: secret::digest(&secret),
                prefix: secret
                    .chars()
                    .take(secret::TOKEN_PREFIX.len() + 6)
                    .collect(),
                expires,
            })
            .await?;
        Ok(Issued { record, secret })
    }

    /// `actor`'s API tokens.
    pub async fn api_tokens(&self, actor: &User) -> Result<Vec<ApiToken>> {
        self.inner.store.api_tokens(actor.id).await
    }

    /// Revokes one of `actor`'s API tokens.
    pub async fn revoke_api_token(&self, actor: &User, id: i64) -> Result<ApiToken> {
        self.inner.store.revoke_api_token(actor.id, id).await
    }

    /// Invites a person with `role`, for `ttl`. The Captain and admins invite
    /// members; only the Captain invites admins.
    pub async fn create_invite(
        &self,
        actor: &User,
        role: Role,
        ttl: Duration,
    ) -> Result<Issued<Invite>> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin invites people".into(),
            ));
        }
        match role {
            Role::Captain => {
                return Err(Error::Refused(
                    "the workspace has one Captain; invite an admin instead".into(),
                ));
            }
            Role::Admin if actor.role != Role::Captain => {
                return Err(Error::Forbidden("only the Captain invites admins".into()));
            }
            _ => {}
        }
        if ttl.is_zero() || ttl > MAX_INVITE_TTL {
            return Err(Error::invalid(
                "invitation lifetime",
                "it must be more than zero and at most 30 days",
            ));
        }
        let secret = secret::generate(secret::INVITE_PREFIX)?;
        let record = self
            .inner
            .store
            .insert_invite(NewInvite {
                secret_hash: secret::digest(&secret),
                role,
                created_by: actor.id,
                expires: after(ttl)?,
            })
            .await?;
        Ok(Issued { record, secret })
    }

    /// Every invitation (for the Captain and admins).
    pub async fn invites(&self, actor: &User) -> Result<Vec<Invite>> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin sees invitations".into(),
            ));
        }
        self.inner.store.invites().await
    }

    /// Revokes an unused invitation.
    pub async fn revoke_invite(&self, actor: &User, id: i64) -> Result<Invite> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin revokes invitations".into(),
            ));
        }
        self.inner.store.revoke_invite(id).await
    }

    /// Whether an invitation code can still be used, so the page it opens
    /// can say so before anyone fills in a form: the invitation (its role,
    /// when it lapses) if it can; otherwise why not (unknown, used, revoked,
    /// expired), as `Unauthenticated`.
    pub async fn check_invite(&self, code: &str) -> Result<Invite> {
        let not_valid =
            |why: &str| Error::Unauthenticated(format!("this invitation {why}; ask for a new one"));
        if !secret::looks_like(code, secret::INVITE_PREFIX) {
            return Err(not_valid("is not valid"));
        }
        let Some(invite) = self
            .inner
            .store
            .invite_by_hash(&secret::digest(code))
            .await?
        else {
            return Err(not_valid("is not valid"));
        };
        if invite.accepted_by.is_some() {
            return Err(not_valid("was used already"));
        }
        if invite.revoked.is_some() {
            return Err(not_valid("was revoked"));
        }
        if invite.expires <= Timestamp::now() {
            return Err(not_valid("has expired"));
        }
        Ok(invite)
    }

    /// Accepts an invitation: the person joins with its role and the name and
    /// password they chose.
    pub async fn accept_invite(&self, code: &str, request: AccountRequest) -> Result<User> {
        if !secret::looks_like(code, secret::INVITE_PREFIX) {
            return Err(Error::Unauthenticated(
                "this invitation is not valid: it is unknown, used, revoked or expired; ask for \
                 a new one"
                    .into(),
            ));
        }
        let (name, display_name, password_hash) = request.prepare().await?;
        self.check_display_name_is_free(&name, &display_name)
            .await?;
        let user = self
            .inner
            .store
            .accept_invite(InviteAcceptance {
                secret_hash: secret::digest(code),
                name,
                display_name,
                password_hash,
            })
            .await?;
        tracing::info!(user = %user.name, role = %user.role, "joined by invitation");
        Ok(user)
    }
}
