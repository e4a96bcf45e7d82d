use helm_core::model::{ChannelRef, ModelChoice, PolicyLevel, ThreadId};
use helm_core::store::PolicyScope;
use helm_core::{ErrorKind, Helm, HelmOptions};

use super::kit::{Fixture, LAUNCH_PURPOSE};

fn choice(provider: &str, model: &str) -> Option<ModelChoice> {
    Some(ModelChoice::new(provider, Some(model.to_string())))
}

#[tokio::test]
async fn model_policy_resolves_session_then_channel_then_workspace_then_fallback()
-> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let mut options = HelmOptions::new(f.data_dir());
    options.fallback_model = choice("local", "llama3");
    let helm = Helm::open(options).await?;
    super::kit::register_app_providers(&helm, &["openai", "anthropic", "ollama"]);
    let launch = helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let channel = ChannelRef::Id(launch.channel.id);

    // A thread of the channel (threads arrive with the agent-turn issue; a row is enough here).
    let db = f.raw_db()?;
    db.execute(
        "INSERT INTO threads (channel_id, title, status, opened_at, updated_at) VALUES (?1, 'plan', 'open', 0, 0)",
        [launch.channel.id.get()],
    )?;
    let thread = ThreadId(db.last_insert_rowid());

    let level =
        |r: Option<helm_core::model::ResolvedModel>| r.map(|r| (r.level, r.choice.provider));
    assert_eq!(
        level(helm.resolve_model(&channel, Some(thread)).await?),
        Some((PolicyLevel::Fallback, "local".into()))
    );

    helm.set_model_policy(
        &f.captain,
        PolicyScope::Workspace,
        choice("openai", "gpt-5"),
    )
    .await?;
    assert_eq!(
        level(helm.resolve_model(&channel, Some(thread)).await?),
        Some((PolicyLevel::Workspace, "openai".into()))
    );

    helm.set_model_policy(
        &f.captain,
        PolicyScope::Channel(launch.channel.id),
        choice("anthropic", "claude"),
    )
    .await?;
    assert_eq!(
        level(helm.resolve_model(&channel, Some(thread)).await?),
        Some((PolicyLevel::Channel, "anthropic".into()))
    );

    helm.set_model_policy(
        &f.captain,
        PolicyScope::Session(thread),
        choice("ollama", "qwen"),
    )
    .await?;
    let resolved = helm.resolve_model(&channel, Some(thread)).await?;
    assert_eq!(
        level(resolved.clone()),
        Some((PolicyLevel::Session, "ollama".into()))
    );
    assert_eq!(
        resolved.and_then(|r| r.choice.model).as_deref(),
        Some("qwen")
    );
    // Other threads of the channel are not affected by a session override.
    assert_eq!(
        level(helm.resolve_model(&channel, None).await?),
        Some((PolicyLevel::Channel, "anthropic".into()))
    );

    // Clearing a level falls back to the next one.
    helm.set_model_policy(&f.captain, PolicyScope::Channel(launch.channel.id), None)
        .await?;
    helm.set_model_policy(&f.captain, PolicyScope::Session(thread), None)
        .await?;
    assert_eq!(
        level(helm.resolve_model(&channel, Some(thread)).await?),
        Some((PolicyLevel::Workspace, "openai".into()))
    );

    // Other channels inherit the workspace default.
    let other = helm
        .create_channel(&f.captain, "ops", "Operations.")
        .await?;
    assert_eq!(
        level(
            helm.resolve_model(&ChannelRef::Id(other.channel.id), None)
                .await?
        ),
        Some((PolicyLevel::Workspace, "openai".into()))
    );

    // Changing the model never touches the agent's identity.
    let after = helm.channel(&channel).await?;
    assert_eq!(after.agent, launch.agent);
    assert_eq!(after.profile, launch.profile);
    Ok(())
}

#[tokio::test]
async fn setting_a_policy_checks_authority_and_targets() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let member = f
        .helm
        .add_user(&f.captain, "mira", helm_core::model::Role::Member)
        .await?;
    let launch = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    let err = f
        .helm
        .set_model_policy(&member, PolicyScope::Workspace, choice("x", "y"))
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    let err = f
        .helm
        .set_model_policy(
            &member,
            PolicyScope::Channel(launch.channel.id),
            choice("x", "y"),
        )
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    let err = f
        .helm
        .set_model_policy(
            &f.captain,
            PolicyScope::Session(ThreadId(999)),
            choice("x", "y"),
        )
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::NotFound));
    let err = f
        .helm
        .set_model_policy(&f.captain, PolicyScope::Workspace, choice(" ", "y"))
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Invalid));
    // A provider nobody registered is refused when it is chosen, not when
    // a turn fails.
    let err = f
        .helm
        .set_model_policy(&f.captain, PolicyScope::Workspace, choice("nobody", "y"))
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::NotFound));
    // The application's own provider lists no models: the choice stands,
    // unverified, and says so.
    super::kit::register_app_providers(&f.helm, &["app"]);
    let check = f
        .helm
        .set_model_policy(&f.captain, PolicyScope::Workspace, choice("app", "m"))
        .await?
        .ok_or_else(|| anyhow::anyhow!("no check"))?;
    assert_eq!(check.verification, helm_core::Verification::Unverified);
    assert!(
        check
            .note
            .as_deref()
            .unwrap_or("")
            .contains("does not list"),
        "{check:?}"
    );
    Ok(())
}
