//! The layering of [`HelmConfig`] and its errors.

use std::path::PathBuf;

use super::*;

fn file(text: &str) -> Result<ConfigLayer> {
    ConfigLayer::toml(
        text,
        ConfigSource::File(PathBuf::from("/etc/helm/helm.toml")),
    )
}

fn env(vars: &'static [(&'static str, &'static str)]) -> Result<ConfigLayer> {
    ConfigLayer::env(|k| {
        vars.iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.to_string())
    })
}

#[test]
fn defaults_then_file_then_env_then_command_line() -> Result<()> {
    let defaults = HelmConfig::resolve([])?;
    assert_eq!(defaults.config, HelmConfig::default());
    assert_eq!(defaults.source_of("store"), ConfigSource::Default);

    let layered = HelmConfig::resolve([
        file(
            r#"
            store = "sqlite://state/helm.db"
            fallback_model = "anthropic/claude-sonnet-4"
            listen = "0.0.0.0:80"        # the server's, not core's: left to it
            [computer]
            isolation = "bubblewrap"
            [replies]
            max_tokens = 100
            [runtime]
            max_steps = 4
            "#,
        )?,
        env(&[("HELM_MAX_TOKENS", "200"), ("HELM_ISOLATION", "process")])?,
        {
            let mut flags = ConfigLayer::new();
            flags.set_flag("computer.isolation", IsolationChoice::Auto)?;
            flags
        },
    ])?;
    let c = &layered.config;
    assert_eq!(
        c.store,
        Some(StoreUrl::Sqlite(PathBuf::from("state/helm.db")))
    );
    assert_eq!(c.replies.max_tokens, 200, "env over file");
    assert_eq!(
        c.computer.isolation,
        IsolationChoice::Auto,
        "flags over env"
    );
    assert_eq!(c.runtime.max_steps, 4, "file over defaults");
    assert_eq!(c.runtime.capacity_per_agent, 3, "untouched defaults stay");
    assert_eq!(
        c.fallback_model(),
        Some(ModelChoice::new(
            "anthropic",
            Some("claude-sonnet-4".into())
        ))
    );
    assert_eq!(
        layered.source_of("replies.max_tokens"),
        ConfigSource::Env("HELM_MAX_TOKENS")
    );
    assert_eq!(
        layered.source_of("computer.isolation"),
        ConfigSource::CommandLine
    );
    assert!(matches!(
        layered.source_of("runtime.max_steps"),
        ConfigSource::File(_)
    ));

    let mut options = HelmOptions::new("/data");
    layered.apply(&mut options)?;
    assert_eq!(options.runtime.max_steps, 4);
    assert_eq!(options.runtime.max_tokens, 200);
    assert_eq!(options.computer.isolation, IsolationChoice::Auto);
    assert_eq!(options.store, c.store);
    assert!(options.fallback_model.is_some());
    Ok(())
}

/// The message of the error `result` ends in, or a failure.
fn message<T: std::fmt::Debug>(result: Result<T>) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_values_name_their_key_and_where_they_came_from() -> Result<()> {
    let bad_env = message(env(&[("HELM_MAX_TOKENS", "lots")]));
    assert!(bad_env.contains("replies.max_tokens"), "{bad_env}");
    assert!(bad_env.contains("HELM_MAX_TOKENS"), "{bad_env}");

    let bad_choice = message(HelmConfig::resolve([env(&[("HELM_ISOLATION", "docker")])?]));
    assert!(bad_choice.contains("computer.isolation"), "{bad_choice}");
    assert!(bad_choice.contains("HELM_ISOLATION"), "{bad_choice}");

    let bad_file = message(HelmConfig::resolve([file(
        "[replies]\nmax_tokens = \"many\"",
    )?]));
    assert!(bad_file.contains("replies.max_tokens"), "{bad_file}");
    assert!(bad_file.contains("/etc/helm/helm.toml"), "{bad_file}");

    let unknown = message(HelmConfig::resolve([file(
        "[computer]\nisolatoin = \"process\"",
    )?]));
    assert!(unknown.contains("computer.isolatoin"), "{unknown}");

    let zero = message(HelmConfig::resolve([file("[runtime]\nmax_steps = 0")?]));
    assert!(
        zero.contains("runtime.max_steps") && zero.contains("helm.toml"),
        "{zero}"
    );

    let no_cache = message(HelmConfig::resolve([env(&[(
        "HELM_VECTOR_CACHE_MB",
        "0",
    )])?]));
    assert!(
        no_cache.contains("memory.vector_cache_mb") && no_cache.contains("HELM_VECTOR_CACHE_MB"),
        "{no_cache}"
    );
    let cache = HelmConfig::resolve([env(&[("HELM_VECTOR_CACHE_MB", "64")])?])?;
    assert_eq!(cache.config.memory.vector_cache_bytes(), 64 << 20);
    assert_eq!(
        cache.config.memory.read_map_bytes(),
        0,
        "readers map nothing by default"
    );
    let map = HelmConfig::resolve([env(&[("HELM_READ_MAP_MB", "512")])?])?;
    assert_eq!(map.config.memory.read_map_bytes(), 512 << 20);
    let bad_map = message(env(&[("HELM_READ_MAP_MB", "lots")]));
    assert!(bad_map.contains("memory.read_map_mb"), "{bad_map}");

    let mut flags = ConfigLayer::new();
    flags.set_flag("store", "mysql://db/helm")?;
    let store = message(HelmConfig::resolve([flags]));
    assert!(
        store.contains("store") && store.contains("the command line"),
        "{store}"
    );
    assert!(!store.contains("--"), "core errors name no flags: {store}");

    let model = message(HelmConfig::resolve([env(&[(
        "HELM_FALLBACK_MODEL",
        "openai/",
    )])?]));
    assert!(
        model.contains("fallback_model") && model.contains("HELM_FALLBACK_MODEL"),
        "{model}"
    );

    let not_toml = message(file("store = "));
    assert!(not_toml.contains("/etc/helm/helm.toml"), "{not_toml}");
    Ok(())
}

#[test]
fn a_postgres_store_is_taken_where_the_build_has_one() -> Result<()> {
    let pg = HelmConfig::resolve([env(&[("HELM_STORE", "postgres://helm:pw@db/helm")])?])?;
    assert!(matches!(pg.config.store, Some(StoreUrl::Postgres(_))));
    let mut options = HelmOptions::new("/data");
    let applied = pg.apply(&mut options);
    if cfg!(feature = "postgres") {
        applied?;
        assert_eq!(options.store, pg.config.store);
    } else {
        let Err(e) = applied else {
            panic!("a Postgres store was accepted without the postgres feature");
        };
        assert!(matches!(e, Error::NotBuiltIn(_)), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("Postgres") && text.contains("HELM_STORE"),
            "{text}"
        );
        assert!(!text.contains("pw"), "the password is hidden: {text}");
    }
    Ok(())
}

#[test]
fn channels_may_choose_among_named_computers() -> Result<()> {
    let named = HelmConfig::resolve([file(
        "[computers.gpu]\nat = \"https://gpu.example:8000/\"\nkey_env = \"PATH\"\n\
         [computers.box-2]\nat = \"http://box-{channel}.example:8000\"\nkey_env = \"PATH\"",
    )?])?;
    let mut options = HelmOptions::new("/data");
    named.apply(&mut options)?;
    assert_eq!(
        options.computers.default, None,
        "the default stays this host"
    );
    let names: Vec<&str> = options.computers.named.keys().map(String::as_str).collect();
    assert_eq!(names, ["box-2", "gpu"]);
    assert_eq!(
        options.computers.named["gpu"].url,
        "https://gpu.example:8000"
    );
    options.computers.check("gpu")?;
    let unknown = options.computers.check("tpu").map_err(|e| e.to_string());
    assert!(
        unknown.as_ref().is_err_and(|e| e.contains("box-2, gpu")),
        "{unknown:?}"
    );
    // A named computer without its key names the table it is in.
    let unkeyed = HelmConfig::resolve([file(
        "[computers.gpu]\nat = \"https://gpu.example:8000\"\nkey_env = \"HELM_TEST_NO_GPU_KEY\"",
    )?])?;
    let Err(e) = unkeyed.apply(&mut HelmOptions::new("/data")) else {
        panic!("a named computer without its key was accepted");
    };
    assert!(
        matches!(&e, Error::Config { key, .. } if key == "computers.gpu.key_env"),
        "{e:?}"
    );
    for (bad, key) in [
        (
            "[computers.GPU]\nat = \"https://gpu.example\"\nkey_env = \"PATH\"",
            "computers.GPU",
        ),
        (
            "[computers.gpu]\nat = \"gpu.example\"\nkey_env = \"PATH\"",
            "computers.gpu.at",
        ),
    ] {
        let Err(e) = HelmConfig::resolve([file(bad)?])?.apply(&mut HelmOptions::new("/data"))
        else {
            panic!("{bad} was accepted");
        };
        assert!(
            matches!(&e, Error::Config { key: k, .. } if k == key),
            "{e:?}"
        );
    }
    Ok(())
}

#[test]
fn remote_computers_take_their_key_from_the_environment() -> Result<()> {
    let remote = HelmConfig::resolve([file(
        "[computer]\nat = \"https://box.example:7401\"\nkey_env = \"HELM_TEST_UNSET_BOX_KEY\"",
    )?])?;
    assert_eq!(
        remote.config.computer.location(),
        Ok(ComputerLocation::Remote {
            url: "https://box.example:7401".into(),
            key_env: "HELM_TEST_UNSET_BOX_KEY".into()
        })
    );
    let mut options = HelmOptions::new("/data");
    let Err(e) = remote.apply(&mut options) else {
        panic!("a remote computer without its key was accepted");
    };
    assert!(
        matches!(&e, Error::Config { key, .. } if key == "computer.key_env"),
        "{e:?}"
    );
    assert!(e.to_string().contains("HELM_TEST_UNSET_BOX_KEY"), "{e}");
    assert_eq!(
        options.computers,
        ComputerPlacement::default(),
        "nothing half-applied"
    );
    // Any variable that is set holds a key (PATH always is).
    let keyed = HelmConfig::resolve([file(
        "[computer]\nat = \"https://box.example:7401\"\nkey_env = \"PATH\"",
    )?])?;
    keyed.apply(&mut options)?;
    assert_eq!(
        options.computers.default.as_ref().map(|s| s.url.as_str()),
        Some("https://box.example:7401")
    );
    // `local` from the environment overrides the file's remote computer.
    let local = HelmConfig::resolve([
        file("[computer]\nat = \"https://box.example:7401\"")?,
        env(&[("HELM_COMPUTER", "local")])?,
    ])?;
    local.apply(&mut HelmOptions::new("/data"))?;
    let bad = message(HelmConfig::resolve([env(&[("HELM_COMPUTER", "box")])?]));
    assert!(
        bad.contains("computer.at") && bad.contains("HELM_COMPUTER"),
        "{bad}"
    );
    Ok(())
}
