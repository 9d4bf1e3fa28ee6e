//! Which skills are used (behaviour.md §21), through the real binary: every
//! surface records into the data folder's `usage.json` (both eras, and over
//! HTTP), `skillserve stats` reads it (its `--json` shape exactly), a data
//! folder that cannot be written costs one warning and no request, `usage =
//! false` records nothing, the catalog over its budget puts a used skill
//! first, and `/metrics` counts loads per skill.

use std::path::PathBuf;

use rmcp::model::{GetPromptRequestParams, GetSkillRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};
use skillserve::usage::Day;

use crate::common::http::HttpServer;
use crate::common::{Fixture, Server, is_error, listed, text};

/// `alpha` (with `references/guide.md`) and `beta` in a custom folder.
pub(crate) fn fixture() -> Fixture {
    let fixture = Fixture::empty();
    fixture.write(
        "team/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Alpha things.\n---\nRead references/guide.md.\n",
    );
    fixture.write("team/alpha/references/guide.md", "# Guide\n");
    fixture.write(
        "team/beta/SKILL.md",
        "---\nname: beta\ndescription: Beta things.\n---\nUse beta.\n",
    );
    fixture
}

pub(crate) const ARGS: &[&str] = &["--skills-dir", "team", "--no-project"];

fn usage_file(fixture: &Fixture) -> PathBuf {
    fixture.path("home/.local/share/skillserve/usage.json")
}

/// `skillserve stats --json` with `args`.
pub(crate) fn stats(fixture: &Fixture, args: &[&str]) -> Value {
    let mut all = vec!["stats", "--json"];
    all.extend(args);
    all.extend(ARGS);
    let out = fixture.run(&all);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// Loads every surface can load, as the client `name`.
async fn use_every_surface(fixture: &Fixture, name: &str, v2026: bool) {
    let server = Server::start_as(fixture.command(ARGS), name, v2026).await;
    let loaded = server.call("alpha").await;
    assert!(!is_error(&loaded), "{}", text(&loaded));
    let file = server
        .call_with(rmcp::object!({"name": "alpha", "file": "references/guide.md"}))
        .await;
    assert!(!is_error(&file), "{}", text(&file));
    server
        .client
        .get_prompt(GetPromptRequestParams::new("beta"))
        .await
        .unwrap();
    server
        .client
        .get_skill(GetSkillRequestParams::new("skill://alpha/SKILL.md"))
        .await
        .unwrap();
    for uri in ["skill://beta/SKILL.md", "skill://alpha/references/guide.md"] {
        server
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap();
    }
    // A miss and a refused file are no use.
    assert!(is_error(&server.call("gamma").await));
    let (status, log) = server.stop().await;
    assert!(status.success(), "{log}");
    assert!(!log.contains("usage:"), "{log}");
}

#[tokio::test]
async fn every_surface_records_its_loads_and_file_reads_on_both_eras() {
    let fixture = fixture();
    use_every_surface(&fixture, "claude-code", false).await;
    use_every_surface(&fixture, "cursor-vscode", true).await;
    let report = stats(&fixture, &[]);
    let skill = |name: &str| {
        report["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{report:#}"))
            .clone()
    };
    let alpha = skill("alpha");
    assert_eq!(alpha["loads"], 4);
    assert_eq!(
        alpha["surfaces"],
        json!({"tool": 2, "prompt": 0, "skills_get": 2, "resource": 0})
    );
    assert_eq!(
        alpha["clients"],
        json!({"claude-code": 2, "cursor-vscode": 2})
    );
    assert_eq!(alpha["files"], json!({"references/guide.md": 4}));
    let beta = skill("beta");
    assert_eq!(
        beta["surfaces"],
        json!({"tool": 0, "prompt": 2, "skills_get": 0, "resource": 2})
    );
    assert_eq!(beta["files"], json!({}));
    assert_eq!(report["unused"], json!([]));
    assert_eq!(
        report["clients"],
        json!([
            {"client": "claude-code", "loads": 4, "skills": 2},
            {"client": "cursor-vscode", "loads": 4, "skills": 2}
        ])
    );
    // One client's uses only.
    let claude = stats(&fixture, &["--client", "claude*"]);
    assert_eq!(claude["skills"][0]["loads"], 2);
    assert_eq!(claude["clients"].as_array().unwrap().len(), 1);
}

#[test]
fn over_http_loads_are_recorded_and_counted_in_metrics() {
    let fixture = fixture();
    let server = HttpServer::ready(&fixture, &["--skills-dir", "team", "--metrics"]);
    let call = json!({"name": "skill", "arguments": {"name": "beta"}});
    for id in 1..=3 {
        let answer = server
            .stateless(id, "tools/call", call.clone(), &[])
            .answer();
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let metrics = server.get("/metrics", &[]).body;
    assert!(
        metrics.contains(
            "\nskillserve_skill_loads_total{skill=\"beta\"} 3\nskillserve_skill_loads_total{skill=\"(other)\"} 0\n"
        ),
        "{metrics}"
    );
    let (status, log) = server.terminate();
    assert!(status.success(), "{log}");
    let report = stats(&fixture, &[]);
    assert_eq!(report["skills"][0]["name"], "beta");
    assert_eq!(report["skills"][0]["clients"], json!({"it": 3}));
}

#[test]
fn stats_json_has_the_documented_shape_and_the_text_the_same_figures() {
    let fixture = fixture();
    let today = Day::today();
    let at = |days_ago: u32, secs: u64| u64::from(today.minus(days_ago).0) * 86_400 + secs;
    let team = fixture.path("team").to_string_lossy().into_owned();
    let file = json!({
        "skills": [["custom", team, "alpha"], ["user", "/gone", "old"]],
        "clients": ["claude-code", ""],
        "days": [
            {"day": today.minus(40).to_string(), "loads": [[1, 0, 9, 0, 0, 0, at(40, 60)]], "files": []},
            {"day": today.minus(2).to_string(), "loads": [[0, 1, 0, 1, 0, 0, at(2, 3_600)]], "files": []},
            {"day": today.to_string(), "loads": [[0, 0, 2, 0, 1, 0, at(0, 7_200)]],
             "files": [[0, 0, "references/guide.md", 2]]}
        ]
    });
    let first = json!({"skillserve_usage": 1, "recent": [["custom", team, "alpha", 4]]});
    fixture.write(
        "home/.local/share/skillserve/usage.json",
        &format!("{first}\n{file}\n"),
    );
    let report = stats(&fixture, &["--days", "3"]);
    let root = fixture.root().to_string_lossy().into_owned();
    let expected = json!({
        "file": usage_file(&fixture),
        "recording": true,
        "off_by": null,
        "turn_on": null,
        "days": 3,
        "from": today.minus(2).to_string(),
        "to": today.to_string(),
        "client": null,
        "skills": [{
            "name": "alpha",
            "source": "custom",
            "root": team,
            "where": format!("{root}/team/alpha"),
            "loads": 4,
            "surfaces": {"tool": 2, "prompt": 1, "skills_get": 1, "resource": 0},
            "last_loaded": format!("{today}T02:00:00Z"),
            "daily": [1, 0, 3],
            "clients": {"": 1, "claude-code": 3},
            "files": {"references/guide.md": 2}
        }],
        "unused": [{
            "name": "beta",
            "source": "custom",
            "root": team,
            "where": format!("{root}/team/beta")
        }],
        "clients": [
            {"client": "claude-code", "loads": 3, "skills": 1},
            {"client": "", "loads": 1, "skills": 1}
        ],
        "sources": [{"source": "custom", "loads": 4, "skills": 2, "used": 1}]
    });
    assert_eq!(report, expected, "{report:#}");

    let mut args = vec!["stats", "--days", "3"];
    args.extend(ARGS);
    let out = fixture.run(&args);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        format!(
            "\
Skills used over the last 3 days ({} to {today}, UTC days)
From <T>/home/.local/share/skillserve/usage.json

Most used:
  alpha  4 loads  last {today}  custom     <T>/team/alpha
           tool 2; prompt 1; skills/get 1; 2 reads of 1 file; (no name) 1, claude-code 3

Not used in 3 days (1 of 2 skills served):
  beta   custom     <T>/team/beta

By client:
  claude-code  3 loads of 1 skill
  (no name)    1 load of 1 skill

By source:
  custom  4 loads; 1 of 2 skills served used
",
            today.minus(2)
        )
    );
    // The skill used 40 days ago, and no longer served, is in a 60-day report.
    let report = stats(&fixture, &["--days", "60"]);
    assert_eq!(report["skills"][0]["name"], "old");
    assert_eq!(report["skills"][0]["where"], Value::Null);
    let out = fixture.run(&["stats", "--days", "91"]);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
}

#[tokio::test]
async fn a_data_folder_that_cannot_be_written_costs_one_warning_and_no_request() {
    let fixture = fixture();
    // A file where the data folder would be: nothing can be written there.
    fixture.write("home/.local/share/skillserve", "not a folder");
    let server = Server::start_as(fixture.command(ARGS), "claude-code", false).await;
    for _ in 0..20 {
        let loaded = server.call("alpha").await;
        assert!(!is_error(&loaded), "{}", text(&loaded));
    }
    let (status, log) = server.stop().await;
    assert!(status.success(), "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("usage:")).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(
        warnings[0].contains(" WARN ")
            && warnings[0].contains("usage: cannot write ")
            && warnings[0].ends_with(
                "; serving goes on, and usage is kept in memory until it can be written"
            ),
        "{}",
        warnings[0]
    );
    assert_eq!(
        std::fs::read_to_string(fixture.path("home/.local/share/skillserve")).unwrap(),
        "not a folder"
    );
}

/// Runs `script` (sh) in a mount namespace of its own, as root there:
/// `None` when this machine allows no such namespace.
fn in_own_mounts(script: &str, fixture: &Fixture) -> Option<std::process::Output> {
    let root = nix_is_root();
    let mut command = std::process::Command::new("unshare");
    if !root {
        command.args(["--user", "--map-root-user"]);
    }
    command.args(["--mount", "sh", "-c", script]);
    command
        .env_clear()
        .env("HOME", fixture.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SKILLSERVE_LOG", "info")
        .current_dir(fixture.root());
    let probe = std::process::Command::new("unshare")
        .args(if root {
            vec!["--mount", "true"]
        } else {
            vec!["--user", "--map-root-user", "--mount", "true"]
        })
        .status();
    if !probe.is_ok_and(|status| status.success()) {
        return None;
    }
    Some(command.output().expect("unshare runs"))
}

fn nix_is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_full_disk_costs_one_warning_and_no_request() {
    let fixture = fixture();
    let data = fixture.path("home/.local/share/skillserve");
    std::fs::create_dir_all(&data).unwrap();
    let requests: String = (1..=10)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "skill", "arguments": {"name": "alpha"}}})
            .to_string()
                + "\n"
        })
        .collect();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    // A 16 KiB file system, filled up, as the data folder.
    let script = format!(
        "mount -t tmpfs -o size=16k tmpfs '{data}' && \
         (head -c 1048576 /dev/zero > '{data}/filler' 2>/dev/null; true) && \
         printf '%s\\n%s\\n%s' '{initialize}' '{initialized}' '{requests}' | \
         '{bin}' --skills-dir team --no-project",
        data = data.display(),
        bin = crate::common::BIN,
    );
    let Some(out) = in_own_mounts(&script, &fixture) else {
        eprintln!(
            "skipped: no mount namespace here; the unwritable data folder test holds the contract"
        );
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let answers: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let loaded = answers
        .iter()
        .filter(|a| a["result"]["isError"] == false)
        .count();
    assert_eq!(loaded, 10, "{stdout}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("usage:")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("No space left on device"),
        "{}",
        warnings[0]
    );
}

#[tokio::test]
async fn usage_false_records_nothing_and_deletes_nothing() {
    let fixture = fixture();
    let before =
        "{\"skillserve_usage\":1,\"recent\":[]}\n{\"skills\":[],\"clients\":[],\"days\":[]}\n";
    fixture.write("home/.local/share/skillserve/usage.json", before);
    fixture.write("home/.config/skillserve/config.toml", "usage = false\n");
    for args in [ARGS.to_vec(), [ARGS, &["--no-usage"]].concat()] {
        let server = Server::start(fixture.command(&args)).await;
        assert!(!is_error(&server.call("alpha").await));
        server.stop().await;
        assert_eq!(
            std::fs::read_to_string(usage_file(&fixture)).unwrap(),
            before
        );
    }
    let out = fixture.run(&[&["stats"][..], ARGS].concat());
    let config = fixture.path("home/.config/skillserve/config.toml");
    assert!(
        out.stdout.contains(&format!(
            "\nRecording is off (config.toml:1): these are the uses recorded before.\nTo record uses again, set `usage = true` (or remove the line `usage = false`) at line 1 of {}.\n",
            config.display()
        )),
        "{}",
        out.stdout
    );
    // No skill is called unused: uses are not counted while it is off.
    assert!(
        out.stdout
            .contains("\nNot used in 30 days: not known while recording is off.\n\nBy client:"),
        "{}",
        out.stdout
    );
    // Without the setting, the same call is recorded.
    std::fs::remove_file(fixture.path("home/.config/skillserve/config.toml")).unwrap();
    let server = Server::start(fixture.command(ARGS)).await;
    assert!(!is_error(&server.call("alpha").await));
    server.stop().await;
    assert_eq!(stats(&fixture, &[])["skills"][0]["loads"], 1);
}

#[tokio::test]
async fn over_budget_the_catalog_lists_a_used_skill_first_with_its_description() {
    let fixture = Fixture::empty();
    let description =
        "A skill with a description long enough that forty of them overflow any budget.";
    for i in 0..40 {
        fixture.write(
            &format!("team/skill-{i:02}/SKILL.md"),
            &format!("---\nname: skill-{i:02}\ndescription: {description}\n---\nbody\n"),
        );
    }
    let args = [ARGS, &["--description-budget", "1500"]].concat();
    let server = Server::start(fixture.command(&args)).await;
    let before = server.description().await;
    assert_eq!(listed(&before)[0], "skill-00");
    for _ in 0..2 {
        assert!(!is_error(&server.call("skill-37").await));
    }
    assert!(!is_error(&server.call("skill-21").await));
    server.stop().await;

    let server = Server::start(fixture.command(&args)).await;
    let after = server.description().await;
    assert!(after.chars().count() <= 1500);
    let names = listed(&after);
    assert_eq!(&names[..3], ["skill-37", "skill-21", "skill-00"], "{after}");
    assert_eq!(names.len(), 40);
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(lines[3], format!("- skill-37: {description}"));
    assert_eq!(lines[4], format!("- skill-21: {description}"));
    assert!(
        lines[5].ends_with('…') || lines[5] == "- skill-00",
        "{after}"
    );
    server.stop().await;
    // `list --description` prints what the server sends.
    let out = fixture.run(&[&["list", "--description"][..], &args].concat());
    assert_eq!(out.stdout, format!("{after}\n"));
}
