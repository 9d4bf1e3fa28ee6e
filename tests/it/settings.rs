//! `config.toml` (behaviour.md §17.1, §17.2) through the real binary: errors
//! that name file, line and key; `skillserve config`; `disable` / `enable`
//! keeping the file's comments; a running server that follows the file and
//! keeps its last good settings when an edit is not valid.

use std::time::Duration;

use crate::common::{Fixture, Server, is_error, listed, text};

/// Where the settings file of a fixture's home is.
const CONFIG: &str = "home/.config/skillserve/config.toml";

const ARGS: &[&str] = &["--skills-dir", "skills", "--no-project", "--no-plugins"];

/// Three skills in `skills/`, none in the home.
fn fixture() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir_all(fixture.path("home")).unwrap();
    for name in ["alpha", "beta", "pdf-old"] {
        fixture.write(
            &format!("skills/{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n"),
        );
    }
    fixture
}

fn with<'a>(command: &[&'a str]) -> Vec<&'a str> {
    command.iter().chain(ARGS).copied().collect()
}

/// Waits for one `tools/list_changed` and the prompts and resources ones.
async fn list_changed(server: &mut Server) {
    tokio::time::timeout(Duration::from_secs(20), server.notifications.recv())
        .await
        .expect("tools/list_changed")
        .unwrap();
    let mut lists = Vec::new();
    while lists.len() < 2 {
        let kind = tokio::time::timeout(Duration::from_secs(20), server.list_changes.recv())
            .await
            .expect("prompts and resources list_changed")
            .unwrap();
        lists.push(kind);
    }
    lists.sort();
    assert_eq!(lists, ["prompts", "resources"]);
}

#[test]
fn an_unknown_key_or_a_bad_value_stops_start_up_naming_file_line_and_key() {
    let fixture = fixture();
    fixture.write(CONFIG, "# settings\nuser = false\nskills_dir = [\"x\"]\n");
    let out = fixture.run(&with(&["list"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: <T>/home/.config/skillserve/config.toml:3: unknown key `skills_dir` (did you mean `skills_dirs`?)\n"
    );
    fixture.write(
        CONFIG,
        "[clients.\"cursor*\"]\ndescription_budget = \"big\"\n",
    );
    let out = fixture.run(&with(&["list"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: <T>/home/.config/skillserve/config.toml:2: `description_budget` in [clients.\"cursor*\"] must be a number of characters (a whole number, at least 0), not a string (\"big\")\n"
    );
    // The server does not start with it either.
    let out = fixture.run(ARGS);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.contains("config.toml:2: `description_budget`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_settings_file_named_by_flag_or_variable_must_exist() {
    let fixture = fixture();
    let out = fixture.run(&with(&["list", "--config", "nowhere.toml"]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&out.stderr),
        "skillserve: <T>/nowhere.toml: no such file (named by --config)\n"
    );
    let mut command = fixture.command(&with(&["list"]));
    command.env("SKILLSERVE_CONFIG", fixture.path("other.toml"));
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fixture.anonymize(&String::from_utf8(out.stderr).unwrap()),
        "skillserve: <T>/other.toml: no such file (named by SKILLSERVE_CONFIG)\n"
    );
    // The file named there is read instead of the default one.
    fixture.write("other.toml", "disabled = [\"beta\"]\n");
    let mut command = fixture.command(&with(&["list"]));
    command.env("SKILLSERVE_CONFIG", fixture.path("other.toml"));
    let out = command.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("\n2 skills (custom 2); 1 hidden (see --all)\n"),
        "{stdout}"
    );
}

#[test]
fn include_exclude_and_disabled_decide_together_and_list_all_says_which_rule() {
    let fixture = fixture();
    fixture.write(
        CONFIG,
        "include = [\"source:custom\"]\nexclude = [\"*-old\"]\ndisabled = [\"Beta\"]\n\n[clients.cursor]\ninclude = [\"b*\", \"alpha\"]\n",
    );
    let out = fixture.run(&with(&["list", "--all"]));
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "\
alpha    custom   <T>/skills/alpha
    The alpha skill.

Left out by config.toml:
beta     custom   <T>/skills/beta
    The beta skill.
    disabled (config.toml:3)
pdf-old  custom   <T>/skills/pdf-old
    The pdf-old skill.
    excluded by \"*-old\" (config.toml:2)

1 skill (custom 1); 2 hidden
"
    );
    // A profile narrows what the top level lets through; `--client cursor`
    // is Cursor's row, and the profile is keyed by that id.
    let out = fixture.run(&with(&[
        "list",
        "--all",
        "--client",
        "cursor-vscode",
        "--json",
    ]));
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let reasons: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["name"].as_str().unwrap().to_owned(),
                item["hidden_because"]
                    .as_str()
                    .unwrap_or("shown")
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("alpha".to_owned(), "shown".to_owned()),
            ("beta".to_owned(), "disabled (config.toml:3)".to_owned()),
            (
                "pdf-old".to_owned(),
                "excluded by \"*-old\" (config.toml:2)".to_owned()
            ),
        ]
    );
    fixture.write(CONFIG, "[clients.cursor]\ninclude = [\"b*\"]\n");
    let out = fixture.run(&with(&["list", "--all", "--client", "cursor-vscode"]));
    assert!(
        out.stdout
            .contains("    matched by no pattern of include in [clients.cursor] (config.toml:2)\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn config_prints_each_setting_with_where_it_came_from() {
    let fixture = fixture();
    fixture.write(
        CONFIG,
        "skills_dirs = [\"~/more\"]\nuser = false\ndescription_budget = 5000\nexclude = [\"pdf-old\"]\n\n[clients.\"cursor*\"]\nprompts = false\nnative = false\n",
    );
    let mut command = fixture.command(&["config", "--skills-dir", "skills", "--no-watch"]);
    command.env("SKILLSERVE_LOG", "debug");
    let out = command.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = fixture.anonymize(&String::from_utf8(out.stdout).unwrap());
    let (head, table) = stdout.split_once("\nBuilt-in profiles").unwrap();
    // Columns line up on the real paths, which are longer than `<T>`.
    let spaced = |text: &str| {
        text.lines()
            .map(|line| {
                let indent = line.len() - line.trim_start().len();
                let words: Vec<&str> = line.split_whitespace().collect();
                format!("{}{}", &line[..indent], words.join(" "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        spaced(head),
        spaced(
            "\
Settings file: <T>/home/.config/skillserve/config.toml (found)
Config folder: <T>/home/.config/skillserve (from HOME)
Data folder:   <T>/home/.local/share/skillserve (from HOME)
Home folder:   <T>/home (from HOME)

Settings (flags win over environment variables, which win over the file):
  skills_dirs          \"<T>/skills\"                 --skills-dir
  skills_dirs          \"<T>/home/more\"              config.toml:1
  project              true                         default
  project_dir          \"<T>\"                        default
  user                 false                        config.toml:2
  plugins              true                         default
  max_file_bytes       1048576                      default
  log_level            \"debug\"                      $SKILLSERVE_LOG
  refresh_interval     30                           default
  watch                false                        --no-watch
  description_budget   5000                         config.toml:3
  prompts              true                         default
  resources            true                         default
  usage                true                         default

Filters for every client (exclude wins over include):
  exclude              \"pdf-old\"                    config.toml:4

Client profiles (the first whose glob matches the client's name, or its built-in id, wins):
  [clients.\"cursor*\"]  config.toml:6
    (none)
    prompts            false                        config.toml:7
    native             false                        config.toml:8
"
        )
    );
    assert!(
        table.contains("\n  claude-code     Claude Code (\"claude-code\")\n      loads .claude/skills (every level up to the repository); ~/.claude/skills; Claude Code plugins\n"),
        "{table}"
    );
}

#[tokio::test]
async fn disable_keeps_the_file_as_written_and_a_running_server_drops_the_skill() {
    let fixture = fixture();
    let original = "# skillserve settings\nuser = false   # only the team's skills\n\ndisabled = [\n  \"gamma\", # retired\n]\n";
    fixture.write(CONFIG, original);
    let mut server = fixture.serve(ARGS).await;
    server.watching().await;
    assert_eq!(
        listed(&server.description().await),
        ["alpha", "beta", "pdf-old"]
    );

    let out = fixture.run(&with(&["disable", "beta"]));
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Disabled 'beta' for every client in <T>/home/.config/skillserve/config.toml.\nA running skillserve picks the change up by itself.\n"
    );
    assert_eq!(out.stderr, "");
    assert_eq!(
        std::fs::read_to_string(fixture.path(CONFIG)).unwrap(),
        "# skillserve settings\nuser = false   # only the team's skills\n\ndisabled = [\n  \"gamma\", # retired\n  \"beta\",\n]\n"
    );
    list_changed(&mut server).await;
    assert_eq!(listed(&server.description().await), ["alpha", "pdf-old"]);
    let call = server.call("beta").await;
    assert!(is_error(&call));
    assert!(
        text(&call).starts_with("Skill 'beta' not found."),
        "{}",
        text(&call)
    );

    let out = fixture.run(&with(&["enable", "BETA"]));
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Enabled 'BETA' for every client in <T>/home/.config/skillserve/config.toml.\nA running skillserve picks the change up by itself.\n"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.path(CONFIG)).unwrap(),
        original
    );
    list_changed(&mut server).await;
    assert!(!is_error(&server.call("beta").await));
    server.stop().await;
}

#[test]
fn disable_warns_about_an_unknown_name_and_enable_says_what_still_hides_a_skill() {
    let fixture = fixture();
    let out = fixture.run(&with(&["disable", "nosuch", "--client", "cursor*"]));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        out.stderr,
        "warning: no skill named 'nosuch' is found now; it is disabled all the same, and stays hidden if one appears\n"
    );
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "Disabled 'nosuch' in [clients.\"cursor*\"] in <T>/home/.config/skillserve/config.toml (created it).\nA running skillserve picks the change up by itself.\n"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.path(CONFIG)).unwrap(),
        "[clients.\"cursor*\"]\ndisabled = [\"nosuch\"]\n"
    );
    fixture.write(CONFIG, "exclude = [\"pdf*\"]\n");
    let out = fixture.run(&with(&["enable", "pdf-old"]));
    assert_eq!(
        fixture.anonymize(&out.stdout),
        "'pdf-old' is not disabled for every client in <T>/home/.config/skillserve/config.toml; nothing changed.\nnote: 'pdf-old' is still not offered: excluded by \"pdf*\" (config.toml:1)\nA running skillserve picks the change up by itself.\n"
    );
}

#[tokio::test]
async fn an_invalid_edit_keeps_the_last_good_settings_and_the_log_says_why() {
    let fixture = fixture();
    fixture.write(CONFIG, "disabled = [\"beta\"]\n");
    let mut server = fixture.serve(ARGS).await;
    server.watching().await;
    assert_eq!(listed(&server.description().await), ["alpha", "pdf-old"]);

    fixture.replace(
        CONFIG,
        "disabled = [\"beta\", \"alpha\"]\nskills_dir = [\"x\"]\n",
    );
    server
        .stderr()
        .wait_for(
            "config.toml:2: unknown key `skills_dir` (did you mean `skills_dirs`?); keeping the settings in use until the file is fixed",
            1,
        )
        .await;
    // Still the old settings: beta hidden, alpha served.
    assert!(is_error(&server.call("beta").await));
    assert!(!is_error(&server.call("alpha").await));
    assert_eq!(listed(&server.description().await), ["alpha", "pdf-old"]);

    fixture.replace(CONFIG, "disabled = [\"pdf-old\"]\n");
    list_changed(&mut server).await;
    assert_eq!(listed(&server.description().await), ["alpha", "beta"]);
    server
        .stderr()
        .wait_for("settings read again from", 1)
        .await;
    server.stop().await;
}

#[tokio::test]
async fn a_profile_change_notifies_only_the_clients_whose_view_changed() {
    let fixture = fixture();
    fixture.write(CONFIG, "[clients.\"cursor*\"]\ndisabled = [\"alpha\"]\n");
    let mut cursor = Server::start_as(fixture.command(ARGS), "cursor-vscode", false).await;
    let mut command = fixture.command(ARGS);
    command.env("SKILLSERVE_LOG", "warn,skillserve=debug");
    let mut other = Server::start_as(command, "other", false).await;
    cursor.watching().await;
    other.watching().await;
    assert_eq!(listed(&cursor.description().await), ["beta", "pdf-old"]);
    // Only Cursor's profile changes.
    fixture.replace(
        CONFIG,
        "[clients.\"cursor*\"]\ndisabled = [\"alpha\", \"beta\"]\n",
    );
    list_changed(&mut cursor).await;
    assert_eq!(listed(&cursor.description().await), ["pdf-old"]);
    // The other client's listener looked, and found nothing to send.
    other
        .stderr()
        .wait_for("what 'other' lists did not change", 1)
        .await;
    assert!(other.notifications.try_recv().is_err());
    assert!(other.list_changes.try_recv().is_err());
    assert_eq!(
        listed(&other.description().await),
        ["alpha", "beta", "pdf-old"]
    );
    cursor.stop().await;
    other.stop().await;
}

#[test]
fn flags_win_over_the_file_and_profiles() {
    let fixture = fixture();
    fixture.write(
        "home/.claude/skills/mine/SKILL.md",
        "---\nname: mine\ndescription: A user skill.\n---\n",
    );
    fixture.write(
        CONFIG,
        "user = true\ndescription_budget = 300\n[clients.x]\ndescription_budget = 400\n",
    );
    let out = fixture.run(&[
        "list",
        "--skills-dir",
        "skills",
        "--no-project",
        "--no-plugins",
        "--no-user",
    ]);
    assert!(
        out.stdout.contains("\n3 skills (custom 3)\n"),
        "{}",
        out.stdout
    );
    let out = fixture.run(&[
        "config",
        "--skills-dir",
        "skills",
        "--description-budget",
        "900",
    ]);
    assert!(
        out.stdout
            .contains("  description_budget   900                          --description-budget\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "    description_budget 400                          config.toml:4 (the flag --description-budget wins)\n"
        ),
        "{}",
        out.stdout
    );
}
