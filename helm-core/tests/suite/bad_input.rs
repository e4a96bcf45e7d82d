//! Bad input gets a clear error and changes nothing.

use helm_core::{Error, ErrorKind};

use super::kit::{Fixture, LAUNCH_PURPOSE};

/// Everything the store holds that provisioning would touch.
fn snapshot(f: &Fixture) -> anyhow::Result<Vec<i64>> {
    [
        "channels",
        "agents",
        "agent_profiles",
        "agent_channels",
        "channel_members",
        "messages",
        "journal",
        "events",
    ]
    .iter()
    .map(|t| f.count(&format!("SELECT count(*) FROM {t}")))
    .collect()
}

#[tokio::test]
async fn bad_names_are_refused_with_a_reason() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let before = snapshot(&f)?;
    let worlds_before = helm_tests_dirs(&f);
    let cases: &[(&str, &str)] = &[
        ("", "needs a name"),
        ("#", "needs a name"),
        (&"x".repeat(65), "too long"),
        ("a/b", "not a path"),
        ("..", "not a path"),
        ("../etc", "not a path"),
        ("launch plan", "spaces"),
        ("tab\there", "control character"),
        ("bell\u{7}", "control character"),
        ("new\nline", "control character"),
        ("café", "letters a-z"),
        ("-dash", "start with"),
        ("42", "all digits"),
    ];
    for (name, reason) in cases {
        let err = f
            .helm
            .create_channel(&f.captain, name, LAUNCH_PURPOSE)
            .await
            .err()
            .ok_or_else(|| anyhow::anyhow!("{name:?} accepted"))?;
        assert_eq!(err.kind(), ErrorKind::Invalid, "{name:?}");
        assert!(err.to_string().contains(reason), "{name:?}: {err}");
    }
    assert_eq!(snapshot(&f)?, before);
    assert_eq!(helm_tests_dirs(&f), worlds_before);
    Ok(())
}

#[tokio::test]
async fn a_missing_purpose_asks_the_question() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let before = snapshot(&f)?;
    for purpose in ["", "   ", "\n\t "] {
        let err = f
            .helm
            .create_channel(&f.captain, "launch", purpose)
            .await
            .err();
        let err = err.ok_or_else(|| anyhow::anyhow!("empty purpose accepted"))?;
        assert!(matches!(err, Error::MissingPurpose));
        assert_eq!(err.to_string(), "What is this channel all about?");
    }
    let err = f
        .helm
        .create_channel(&f.captain, "launch", &"p".repeat(5000))
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Invalid));
    assert_eq!(snapshot(&f)?, before);
    Ok(())
}

#[tokio::test]
async fn unknown_channels_are_not_found() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    for name in ["nowhere", "#nowhere", "999"] {
        let err = f.helm.channel(&name.parse()?).await.err();
        let err = err.ok_or_else(|| anyhow::anyhow!("{name} found"))?;
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert!(err.to_string().contains("not found"), "{err}");
        let err = f
            .helm
            .archive_channel(&f.captain, &name.parse()?)
            .await
            .err();
        assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::NotFound));
    }
    Ok(())
}

#[tokio::test]
async fn opening_an_uninitialised_directory_says_to_init() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let err = helm_core::Helm::open(helm_core::HelmOptions::new(dir.path().join("nothing")))
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("opened nothing"))?;
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    // The message is the same for every frontend; the CLI adds its command.
    assert!(err.to_string().contains("initialise it first"), "{err}");
    assert!(!err.to_string().contains("--"), "{err}");
    assert!(
        !dir.path().join("nothing").exists(),
        "open created a directory"
    );
    Ok(())
}

fn helm_tests_dirs(f: &Fixture) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(f.data_dir().join("channels"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// An embedder builds an `ApiKeyRef` by hand: one whose text form would not
/// parse back (the store keeps it as text) is refused before it is stored,
/// so the registry stays readable; one that does survive the trip is kept.
#[tokio::test]
async fn a_key_reference_that_would_not_read_back_is_refused() -> anyhow::Result<()> {
    use helm_core::provider::{ApiKeyRef, ProviderConfig, ProviderKind};
    let f = Fixture::new().await?;
    let config = |name: &str, key: ApiKeyRef| ProviderConfig {
        name: name.to_string(),
        kind: ProviderKind::OpenAi,
        base_url: "http://127.0.0.1:9/v1".to_string(),
        api_key: Some(key),
        default_model: None,
        extra_headers: Default::default(),
    };
    let refused = [
        ApiKeyRef::Env("file:/run/secrets/key".into()),
        ApiKeyRef::Env("MY KEY".into()),
        ApiKeyRef::Env(String::new()),
        ApiKeyRef::File("relative/key".into()),
        ApiKeyRef::Stored("../escape".into()),
    ];
    for key in refused {
        let shown = key.to_string();
        let Err(err) = f
            .helm
            .add_provider(&f.captain, config("bad", key), false)
            .await
        else {
            panic!("{shown:?} accepted");
        };
        assert_eq!(err.kind(), ErrorKind::Invalid, "{shown:?}: {err}");
        assert!(err.to_string().contains("API key reference"), "{err}");
    }
    assert!(f.helm.providers().await?.is_empty());
    let kept = ApiKeyRef::File("/run/secrets/key".into());
    f.helm
        .add_provider(&f.captain, config("good", kept.clone()), false)
        .await?;
    let listed = f.helm.providers().await?;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].api_key, Some(kept));
    Ok(())
}
