//! `1helm` is configured as core resolves it: the data directory's
//! helm.toml, then HELM_*, then the flags; a wrong value is named with its
//! key and where it was set, and what this build lacks is refused.

use super::kit::Cli;

#[test]
fn helm_toml_env_and_flags_layer_and_bad_values_name_their_source() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let file = cli.data().join("helm.toml");

    // A value in the file that makes no sense: named with the file.
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:1\"\n[runtime]\nmax_steps = 0\n",
    )?;
    let bad = cli.run(&["status"])?;
    assert_ne!(bad.code, 0, "{}", bad.stdout);
    assert!(
        bad.stderr.contains("runtime.max_steps") && bad.stderr.contains("helm.toml"),
        "{}",
        bad.stderr
    );

    // The environment overrides the file and is named when it is wrong.
    let fixed = cli.run_with_env(&["status"], &[("HELM_MAX_STEPS", "8")])?;
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let env = cli.run_with_env(&["status"], &[("HELM_MAX_STEPS", "many")])?;
    assert_ne!(env.code, 0);
    assert!(env.stderr.contains("HELM_MAX_STEPS"), "{}", env.stderr);

    // A flag overrides both: the file's embedder is required (and the
    // model is missing here), `--embedder off` makes it words only.
    std::fs::write(&file, "[memory]\nembedder = \"required\"\n")?;
    let required = cli.run_without_model(&["status"], &[])?;
    assert_eq!(required.code, 6, "{}", required.stderr);
    let off = cli.run_without_model(&["--embedder", "off", "status"], &[])?;
    assert_eq!(off.code, 0, "{}", off.stderr);
    std::fs::remove_file(&file)?;

    // A Postgres store is taken from the environment: one nothing listens
    // for fails to connect, saying so without the password.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let url = format!("postgres://helm:secret@127.0.0.1:{port}/helm");
    let pg = cli.run_with_env(&["status"], &[("HELM_STORE", &url)])?;
    assert_ne!(pg.code, 0);
    assert!(
        pg.stderr.contains("connecting to PostgreSQL"),
        "{}",
        pg.stderr
    );
    assert!(!pg.stderr.contains("secret"), "{}", pg.stderr);
    Ok(())
}

#[test]
fn a_channel_chooses_among_the_computers_the_config_names() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    std::fs::write(
        cli.data().join("helm.toml"),
        "[computers.gpu]\nat = \"http://127.0.0.1:9\"\nkey_env = \"HELM_TEST_GPU_KEY\"\n",
    )?;
    // The key's variable unset: refused at start, naming the table.
    let unkeyed = cli.run(&["status"])?;
    assert_ne!(unkeyed.code, 0);
    assert!(
        unkeyed.stderr.contains("computers.gpu.key_env")
            && unkeyed.stderr.contains("HELM_TEST_GPU_KEY"),
        "{}",
        unkeyed.stderr
    );
    let key = [("HELM_TEST_GPU_KEY", "k")];
    let status = cli.run_with_env(&["status"], &key)?;
    assert!(
        status
            .stdout
            .contains("Computers: gpu (a new channel may choose one)"),
        "{}",
        status.stdout
    );
    let other = cli.run_with_env(
        &[
            "channel",
            "create",
            "ml",
            "--purpose",
            "Training.",
            "--computer",
            "tpu",
        ],
        &key,
    )?;
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(
        other.stderr.contains("gpu"),
        "names the choices: {}",
        other.stderr
    );
    let made = cli.run_with_env(
        &[
            "--json",
            "channel",
            "create",
            "ml",
            "--purpose",
            "Training.",
            "--computer",
            "gpu",
        ],
        &key,
    )?;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let json: serde_json::Value = serde_json::from_str(&made.stdout)?;
    assert_eq!(
        json["profile"]["capability_policy"]["computer"], "gpu",
        "{json}"
    );
    let shown = cli.run_with_env(&["channel", "show", "ml"], &key)?;
    assert!(
        shown.stdout.contains("/workspace on the computer gpu"),
        "{}",
        shown.stdout
    );
    Ok(())
}

#[test]
fn init_refuses_a_bad_setting_as_every_command_does() -> anyhow::Result<()> {
    let cli = Cli::empty()?;
    let run = cli.run_with_env(&["init"], &[("HELM_MAX_TOKENS", "abc")])?;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("HELM_MAX_TOKENS") && run.stderr.contains("is not a number"),
        "{}",
        run.stderr
    );
    // Nothing was made: init with the setting mended starts from scratch.
    let mended = cli.run(&["init"])?;
    assert_eq!(mended.code, 0, "{}", mended.stderr);
    assert!(
        mended.stdout.contains("Initialised workspace"),
        "{}",
        mended.stdout
    );
    Ok(())
}
