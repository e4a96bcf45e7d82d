//! `1helm approvals|approve|deny|escalations|audit` on a data directory.

use super::kit::Cli;

#[test]
fn audit_verify_detects_an_edited_row() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    cli.run(&["channel", "create", "launch", "--purpose", "The launch."])?;
    for (action, required) in [("host_command", "no"), ("install_package", "yes")] {
        let run = cli.run(&["approvals", "require", action, required])?;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let log = cli.run(&["audit", "--json"])?.json()?;
    assert_eq!(log.as_array().map(Vec::len), Some(2));
    assert_eq!(log[0]["action"], "approval_policy.changed");
    let ok = cli.run(&["audit", "verify"])?;
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("intact: 2 rows"), "{}", ok.stdout);

    let db = rusqlite::Connection::open(cli.data().join("helm.db"))?;
    assert!(
        db.execute("UPDATE audit_log SET outcome = 'x' WHERE id = 1", [])
            .is_err(),
        "append-only"
    );
    db.execute_batch("DROP TRIGGER audit_log_no_update; UPDATE audit_log SET input_summary = 'host_command needs approval: true' WHERE id = 1;")?;
    let bad = cli.run(&["audit", "verify"])?;
    assert_ne!(bad.code, 0);
    assert!(bad.stdout.contains("NOT intact: row 1"), "{}", bad.stdout);
    let json = cli.run(&["audit", "verify", "--json"])?.json()?;
    assert_eq!(json["first_bad_row"], 1);
    Ok(())
}

#[test]
fn approvals_and_escalations_list_and_refuse_what_does_not_exist() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    let empty = cli.run(&["approvals", "list"])?;
    assert!(
        empty.stdout.contains("No approval requests waiting"),
        "{}",
        empty.stdout
    );
    // Alone, each lists.
    let alone = cli.run(&["approvals"])?;
    assert_eq!(alone.stdout, empty.stdout, "{}", alone.stderr);
    let open = cli.run(&["escalations"])?;
    assert!(
        open.stdout.contains("No open calls for Skipper"),
        "{}",
        open.stderr
    );
    let none = cli.run(&["approve", "42"])?;
    assert_eq!(none.code, 3, "{}", none.stderr);
    let esc = cli
        .run(&["escalations", "list", "--all", "--json"])?
        .json()?;
    assert_eq!(esc.as_array().map(Vec::len), Some(0));
    let bad = cli.run(&["approvals", "require", "launch_rockets", "yes"])?;
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    cli.run(&["user", "add", "mira"])?;
    let member = cli.run(&["--as", "mira", "audit"])?;
    assert_eq!(
        member.code, 7,
        "only the Captain and admins read the audit log: {}",
        member.stderr
    );
    Ok(())
}
