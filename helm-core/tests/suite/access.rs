//! Signing in and who sees what, through the facade: setup once, sessions
//! and tokens that stop working, invitations used once, private channels
//! visible to their members only, and the event audience that follows them.

use std::time::Duration;

use helm_core::model::{ChannelRef, MemberRole, Role, UserId, Visibility};
use helm_core::store::ChannelFilter;
use helm_core::{AccountRequest, ErrorKind, NewChannel};

use super::kit::Fixture;

const PASSWORD: &str = "correct horse battery staple";

fn account(name: &str) -> AccountRequest {
    AccountRequest {
        name: name.into(),
        display_name: None,
        password: PASSWORD.into(),
    }
}

#[tokio::test]
async fn setup_sessions_tokens_and_invitations() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    assert!(f.helm.setup_needed().await?);
    let ttl = Duration::from_secs(3600);
    assert!(f.helm.login("captain", "", ttl).await.is_err());
    let captain = f.helm.complete_setup(account("ada")).await?;
    assert_eq!(
        (captain.name.as_str(), captain.role),
        ("ada", Role::Captain)
    );
    let again = f.helm.complete_setup(account("eve")).await;
    assert_eq!(again.err().map(|e| e.kind()), Some(ErrorKind::Conflict));

    let (user, session) = f.helm.login("ada", PASSWORD, ttl).await?;
    assert_eq!(user.id, captain.id);
    assert_eq!(
        f.helm.authenticate(&session.secret).await?.user.id,
        captain.id
    );
    let wrong = f.helm.login("ada", "nope nope nope", ttl).await;
    assert_eq!(
        wrong.err().map(|e| e.kind()),
        Some(ErrorKind::Unauthenticated)
    );
    f.helm.logout(&session.secret).await?;
    assert!(f.helm.authenticate(&session.secret).await.is_err());

    let token = f.helm.create_api_token(&captain, "ci", None).await?;
    assert_eq!(
        f.helm.authenticate(&token.secret).await?.user.id,
        captain.id
    );
    f.helm.revoke_api_token(&captain, token.record.id).await?;
    assert!(f.helm.authenticate(&token.secret).await.is_err());

    let invite = f
        .helm
        .create_invite(&captain, Role::Member, Duration::from_secs(60))
        .await?;
    let mira = f
        .helm
        .accept_invite(&invite.secret, account("mira"))
        .await?;
    assert_eq!(mira.role, Role::Member);
    let reused = f
        .helm
        .accept_invite(&invite.secret, account("mallory"))
        .await;
    assert_eq!(
        reused.err().map(|e| e.kind()),
        Some(ErrorKind::Unauthenticated)
    );
    let by_member = f
        .helm
        .create_invite(&mira, Role::Member, Duration::from_secs(60))
        .await;
    assert_eq!(
        by_member.err().map(|e| e.kind()),
        Some(ErrorKind::Forbidden)
    );
    Ok(())
}

#[tokio::test]
async fn private_channels_and_their_events_reach_members_only() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let captain = f.captain.clone();
    let mira = f.helm.add_user(&captain, "mira", Role::Member).await?;
    let nol = f.helm.add_user(&captain, "nol", Role::Member).await?;
    let mut request = NewChannel::new("vault", "Private things");
    request.visibility = Visibility::Private;
    let vault = f.helm.create_channel_with(&captain, request).await?;
    let vault_ref = ChannelRef::Id(vault.channel.id);
    f.helm
        .add_channel_member(&captain, &vault_ref, mira.id, MemberRole::Member)
        .await?;

    let hidden = f.helm.visible_channel(&nol, &vault_ref).await;
    assert_eq!(hidden.err().map(|e| e.kind()), Some(ErrorKind::NotFound));
    assert!(f.helm.visible_channel(&mira, &vault_ref).await.is_ok());
    let listed = f
        .helm
        .visible_channels(&nol, ChannelFilter::default())
        .await?;
    assert!(listed.iter().all(|r| r.channel.id != vault.channel.id));
    let posted = f
        .helm
        .post_message(&nol, &vault_ref, "let me in", None)
        .await;
    assert_eq!(posted.err().map(|e| e.kind()), Some(ErrorKind::NotFound));
    let posted = f
        .helm
        .post_message(&mira, &vault_ref, "hello", None)
        .await?;
    let thread = f.helm.visible_thread(&nol, posted.thread.id).await;
    assert_eq!(thread.err().map(|e| e.kind()), Some(ErrorKind::NotFound));
    let removed = f
        .helm
        .remove_channel_member(&nol, &vault_ref, mira.id)
        .await;
    assert_eq!(removed.err().map(|e| e.kind()), Some(ErrorKind::NotFound));

    let log = f.helm.store().events_after(0, 1000).await?;
    let (nol_sees, mira_sees) = (f.helm.audience(&nol).await?, f.helm.audience(&mira).await?);
    let of_vault = |e: &&helm_core::events::Event| e.channel_id == Some(vault.channel.id);
    assert!(log.iter().filter(of_vault).all(|e| !nol_sees.may_see(e)));
    assert!(log.iter().filter(of_vault).all(|e| mira_sees.may_see(e)));
    let captain_sees = f.helm.audience(&captain).await?;
    assert!(log.iter().filter(of_vault).all(|e| captain_sees.may_see(e)));

    // Nol, added by the Captain, is removed by her; Mira leaves. Each
    // removal says who did it, so a page can tell "you left" from "you
    // were removed".
    f.helm
        .add_channel_member(&captain, &vault_ref, nol.id, MemberRole::Member)
        .await?;
    f.helm
        .remove_channel_member(&captain, &vault_ref, nol.id)
        .await?;
    f.helm
        .remove_channel_member(&mira, &vault_ref, mira.id)
        .await?;
    assert!(f.helm.visible_channel(&mira, &vault_ref).await.is_err());
    let removals: Vec<(UserId, Option<UserId>)> = f
        .helm
        .store()
        .events_after(0, 1000)
        .await?
        .into_iter()
        .filter_map(|e| match e.body {
            helm_core::events::EventBody::ChannelMemberRemoved { user_id, by, .. } => {
                Some((user_id, by))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        removals,
        [(nol.id, Some(captain.id)), (mira.id, Some(mira.id))]
    );
    Ok(())
}
