//! `1helm user set-role | deactivate | reactivate`, on a data directory and
//! through a server: the same rules, output and exit codes.

use super::kit::{Cli, Run};
use super::server::{Server, ok};

fn standing_of(list: &serde_json::Value, name: &str) -> (String, bool) {
    let person = list
        .as_array()
        .and_then(|all| all.iter().find(|u| u["name"] == name))
        .cloned()
        .unwrap_or_default();
    (
        person["role"].as_str().unwrap_or_default().to_string(),
        person.get("deactivated").is_some(),
    )
}

fn code(run: &Run, expected: i32) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.code == expected,
        "exit {} (expected {expected}): {}{}",
        run.code,
        run.stdout,
        run.stderr
    );
    Ok(())
}

#[test]
fn people_are_promoted_deactivated_and_reactivated_on_a_data_dir() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    ok(&cli.run(&["user", "add", "mira"])?)?;
    ok(&cli.run(&["user", "add", "nico"])?)?;

    let promoted = cli.run(&["user", "set-role", "mira", "admin"])?;
    ok(&promoted)?;
    assert_eq!(promoted.stdout.trim(), "mira is now admin.");
    let list = cli.run(&["--json", "user", "list"])?.json()?;
    assert_eq!(standing_of(&list, "mira"), ("admin".into(), false));

    let off = cli.run(&["user", "deactivate", "nico"])?;
    ok(&off)?;
    assert!(off.stdout.starts_with("Deactivated nico"), "{}", off.stdout);
    let table = cli.run(&["user", "list"])?;
    let nico = table
        .stdout
        .lines()
        .find(|l| l.contains("nico"))
        .unwrap_or_default();
    assert!(nico.contains("deactivated"), "{}", table.stdout);
    assert!(table.stdout.contains("STATUS"), "{}", table.stdout);
    // A deactivated person cannot act, here either.
    let acting = cli.run(&["--as", "nico", "channel", "list"])?;
    code(&acting, 7)?;
    assert!(acting.stderr.contains("deactivated"), "{}", acting.stderr);
    // An admin may not change roles, nor deactivate themselves.
    code(
        &cli.run(&["--as", "mira", "user", "set-role", "nico", "admin"])?,
        7,
    )?;
    code(
        &cli.run(&["--as", "mira", "user", "deactivate", "mira"])?,
        5,
    )?;
    ok(&cli.run(&["--as", "mira", "user", "reactivate", "nico"])?)?;
    let list = cli.run(&["--json", "user", "list"])?.json()?;
    assert_eq!(standing_of(&list, "nico"), ("member".into(), false));
    // A member may do none of it.
    code(
        &cli.run(&["--as", "nico", "user", "deactivate", "mira"])?,
        7,
    )?;
    // The Captain never changes; unknown people and roles are named.
    let demote = cli.run(&["user", "set-role", "captain", "member"])?;
    code(&demote, 5)?;
    assert!(demote.stderr.contains("Captain"), "{}", demote.stderr);
    code(&cli.run(&["user", "deactivate", "captain"])?, 5)?;
    code(&cli.run(&["user", "deactivate", "nobody"])?, 3)?;
    code(&cli.run(&["user", "set-role", "mira", "captain"])?, 2)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_are_managed_through_a_server_as_on_a_data_dir() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let local = Cli::init()?;
    for args in [
        vec!["user", "add", "mira"],
        vec!["user", "set-role", "mira", "admin"],
        vec!["user", "set-role", "mira", "member"],
        vec!["user", "deactivate", "mira"],
    ] {
        let (remote, here) = (server.run(&args)?, local.run(&args)?);
        ok(&remote)?;
        ok(&here)?;
        assert_eq!(remote.stdout, here.stdout, "{args:?}");
    }
    let list = server.run(&["--json", "user", "list"])?.json()?;
    assert_eq!(standing_of(&list, "mira"), ("member".into(), true));
    for (args, code) in [
        (vec!["user", "deactivate", "nobody"], 3),
        (vec!["user", "reactivate", "nobody"], 3),
    ] {
        let (remote, here) = (server.run(&args)?, local.run(&args)?);
        assert_eq!(remote.code, code, "{args:?}: {}", remote.stderr);
        assert_eq!(here.code, code, "{args:?}: {}", here.stderr);
        assert_eq!(remote.stderr, here.stderr, "{args:?}");
    }
    // The Captain is ada there and captain here: the same refusal.
    let remote = server.run(&["user", "deactivate", "ada"])?;
    let here = local.run(&["user", "deactivate", "captain"])?;
    assert_eq!(
        (remote.code, here.code),
        (5, 5),
        "{}{}",
        remote.stderr,
        here.stderr
    );
    assert_eq!(remote.stderr, here.stderr);
    ok(&server.run(&["user", "reactivate", "mira"])?)?;
    let list = server.run(&["--json", "user", "list"])?.json()?;
    assert_eq!(standing_of(&list, "mira"), ("member".into(), false));
    server.stop().await;
    Ok(())
}
