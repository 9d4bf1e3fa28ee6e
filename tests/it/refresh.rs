//! Freshness: watching, the refresh interval, `tools/list_changed`, rescan on
//! a miss, and correctness under concurrent change (behaviour.md §6), through the
//! real binary.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Fixture, Raw, Server, call, is_error, text, wait_for_exit};

/// Long enough for a notification on a busy CI machine; only a hang guard.
const NOTIFY_WITHIN: Duration = Duration::from_secs(10);

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nBody of {name}.\n")
}

/// An empty home and a `skills` folder with one skill.
fn tree() -> Fixture {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write("skills/alpha/SKILL.md", &skill("alpha", "The first skill."));
    fixture
}

/// Logs the watcher's updates of its watch set, which tests wait for.
const WATCH_DEBUG: &str = "info,skillserve::server::watch=debug";

/// [`serve`] without the interval, with the watcher's updates logged.
async fn serve_debug_watch(fixture: &Fixture) -> Server {
    let args = [
        "--skills-dir",
        "skills",
        "--no-project",
        "--no-plugins",
        "--refresh-interval",
        "0",
    ];
    fixture.serve_logged(&args, WATCH_DEBUG).await
}

async fn serve(fixture: &Fixture, extra: &[&str]) -> Server {
    let mut args = vec!["--skills-dir", "skills", "--no-project", "--no-plugins"];
    args.extend_from_slice(extra);
    fixture.serve(&args).await
}

async fn notified(server: &mut Server, within: Duration) -> bool {
    tokio::time::timeout(within, server.notifications.recv())
        .await
        .is_ok()
}

/// Drains notifications that are already queued or arrive within `settle`.
async fn drain(server: &mut Server, settle: Duration) -> usize {
    let mut count = 0;
    while notified(server, settle).await {
        count += 1;
    }
    count
}

async fn add_modify_delete(server: &mut Server, fixture: &Fixture) {
    // Add.
    fixture.write(
        "skills/beta/SKILL.md",
        &skill("beta", "Added while running."),
    );
    assert!(
        notified(server, NOTIFY_WITHIN).await,
        "list_changed after adding a skill"
    );
    assert!(
        server
            .description()
            .await
            .contains("\n- beta: Added while running.")
    );
    assert!(text(&server.call("beta").await).starts_with("Loading: beta\n"));

    // Modify the description.
    drain(server, Duration::from_millis(300)).await;
    fixture.replace(
        "skills/beta/SKILL.md",
        &skill("beta", "Edited while running."),
    );
    assert!(
        notified(server, NOTIFY_WITHIN).await,
        "list_changed after editing a description"
    );
    assert!(
        server
            .description()
            .await
            .contains("\n- beta: Edited while running.")
    );
    assert!(text(&server.call("beta").await).contains("description: Edited while running."));

    // Delete.
    drain(server, Duration::from_millis(300)).await;
    std::fs::remove_dir_all(fixture.path("skills/beta")).unwrap();
    assert!(
        notified(server, NOTIFY_WITHIN).await,
        "list_changed after deleting a skill"
    );
    assert!(!server.description().await.contains("beta"));
    let gone = server.call("beta").await;
    assert!(is_error(&gone) && text(&gone).starts_with("Skill 'beta' not found."));
}

#[tokio::test]
async fn watching_sees_add_modify_delete_and_notifies() {
    let fixture = tree();
    let mut server = serve(&fixture, &["--refresh-interval", "0"]).await;
    add_modify_delete(&mut server, &fixture).await;
    let (status, stderr) = server.stop().await;
    assert!(status.success());
    assert!(
        stderr.contains("refresh: every") || stderr.contains("refresh: off"),
        "{stderr}"
    );
    assert!(stderr.contains("file watching: on"), "{stderr}");
    assert!(
        stderr.contains("(+1 added, -0 removed, ~0 changed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(+0 added, -1 removed, ~0 changed)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_folder_deleted_and_created_again_is_watched_again() {
    let fixture = tree();
    let mut server = serve(&fixture, &["--refresh-interval", "0"]).await;
    std::fs::remove_dir_all(fixture.path("skills/alpha")).unwrap();
    fixture.write("skills/alpha/SKILL.md", &skill("alpha", "Version two."));
    assert!(notified(&mut server, NOTIFY_WITHIN).await);
    drain(&mut server, Duration::from_millis(500)).await;
    assert!(server.description().await.contains("- alpha: Version two."));
    // The new folder is watched: editing it is seen too.
    fixture.replace("skills/alpha/SKILL.md", &skill("alpha", "Version three."));
    assert!(
        notified(&mut server, NOTIFY_WITHIN).await,
        "the recreated folder is watched"
    );
    assert!(
        server
            .description()
            .await
            .contains("- alpha: Version three.")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_skill_md_added_at_the_depth_limit_is_noticed() {
    let fixture = tree();
    std::fs::create_dir_all(fixture.path("skills/a/b/c/d")).unwrap();
    let mut server = serve(&fixture, &["--refresh-interval", "0"]).await;
    fixture.write(
        "skills/a/b/c/d/SKILL.md",
        &skill("four-down", "At depth four."),
    );
    assert!(notified(&mut server, NOTIFY_WITHIN).await);
    assert!(
        server
            .description()
            .await
            .contains("- four-down: At depth four.")
    );
    server.stop().await;
}

#[tokio::test]
async fn removing_one_path_to_a_folder_keeps_the_other_watched() {
    let fixture = tree();
    std::os::unix::fs::symlink(fixture.path("skills/alpha"), fixture.path("skills/alias")).unwrap();
    let mut server = serve_debug_watch(&fixture).await;
    server.watching().await;
    std::fs::remove_file(fixture.path("skills/alias")).unwrap();
    // The list does not change (the alias was loaded once), the watch set does.
    server.stderr().wait_for("watch set updated", 1).await;
    fixture.replace(
        "skills/alpha/SKILL.md",
        &skill("alpha-renamed", "Still watched."),
    );
    assert!(
        notified(&mut server, NOTIFY_WITHIN).await,
        "the real folder is still watched"
    );
    assert!(
        server
            .description()
            .await
            .contains("- alpha-renamed: Still watched.")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_symlinked_root_pointed_elsewhere_is_followed() {
    let fixture = Fixture::empty();
    std::fs::create_dir(fixture.path("home")).unwrap();
    fixture.write("v1/one/SKILL.md", &skill("one", "In the first target."));
    fixture.write("v2/two/SKILL.md", &skill("two", "In the second target."));
    // In a folder nothing else makes the watcher look at.
    std::fs::create_dir(fixture.path("links")).unwrap();
    std::os::unix::fs::symlink(fixture.path("v1"), fixture.path("links/skills")).unwrap();
    let mut command = fixture.command(&[
        "--skills-dir",
        "links/skills",
        "--no-project",
        "--no-plugins",
        "--refresh-interval",
        "0",
    ]);
    command.env("SKILLSERVE_LOG", WATCH_DEBUG);
    let mut server = Server::start(command).await;
    assert!(server.description().await.contains("- one:"));
    server.watching().await;

    // Re-point the link the way tools do it: a new link renamed over the old.
    std::os::unix::fs::symlink(fixture.path("v2"), fixture.path("links/skills.new")).unwrap();
    std::fs::rename(
        fixture.path("links/skills.new"),
        fixture.path("links/skills"),
    )
    .unwrap();
    assert!(
        notified(&mut server, NOTIFY_WITHIN).await,
        "the re-pointed root is noticed"
    );
    let description = server.description().await;
    assert!(
        description.contains("- two:") && !description.contains("- one:"),
        "{description}"
    );

    // The new target is watched.
    server.stderr().wait_for("watch set updated", 1).await;
    fixture.replace(
        "v2/two/SKILL.md",
        &skill("two", "Edited in the new target."),
    );
    assert!(
        notified(&mut server, NOTIFY_WITHIN).await,
        "the new target is watched"
    );
    assert!(
        server
            .description()
            .await
            .contains("- two: Edited in the new target.")
    );
    server.stop().await;
}

#[tokio::test]
async fn polling_without_watching_sees_add_modify_delete() {
    let fixture = tree();
    let mut server = serve(&fixture, &["--no-watch", "--refresh-interval", "1"]).await;
    add_modify_delete(&mut server, &fixture).await;
    let (_, stderr) = server.stop().await;
    assert!(
        stderr.contains("refresh: every 1 s; file watching: off (--no-watch)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn idle_refreshes_and_a_touch_that_changes_nothing_send_no_notification() {
    let fixture = tree();
    let mut server = serve(&fixture, &["--refresh-interval", "1"]).await;
    // Several idle intervals (and the watcher's start-up refresh).
    assert!(!notified(&mut server, Duration::from_millis(3500)).await);
    // A touch changes the modification time, not the description.
    let file = std::fs::File::options()
        .write(true)
        .open(fixture.path("skills/alpha/SKILL.md"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(file);
    assert!(!notified(&mut server, Duration::from_millis(2500)).await);
    // The body changed but not the frontmatter: no notification, but calls
    // see the new body at once (it is read at call time).
    // Saved atomically, the way editors do.
    let edited = skill("alpha", "The first skill.").replace("Body of alpha.", "New body.");
    fixture.replace("skills/alpha/SKILL.md", &edited);
    assert!(text(&server.call("alpha").await).ends_with("New body.\n"));
    assert!(!notified(&mut server, Duration::from_millis(1500)).await);
    server.stop().await;
}

#[tokio::test]
async fn a_root_created_after_start_is_noticed() {
    let fixture = tree();
    let mut server = fixture
        .serve(&["--no-project", "--no-plugins", "--refresh-interval", "0"])
        .await;
    assert!(
        server
            .description()
            .await
            .ends_with("(none yet: no SKILL.md files were found)")
    );
    // ~/.agents does not exist at start: its ancestor (the home) is watched.
    std::fs::create_dir_all(fixture.path("home/.agents/skills/late")).unwrap();
    std::fs::write(
        fixture.path("home/.agents/skills/late/SKILL.md"),
        skill("late", "Created after start-up."),
    )
    .unwrap();
    assert!(
        notified(&mut server, NOTIFY_WITHIN).await,
        "list_changed for a new root"
    );
    assert!(
        server
            .description()
            .await
            .contains("\n- late: Created after start-up.")
    );

    // Once the root exists it is watched itself: a second skill shows up too.
    drain(&mut server, Duration::from_millis(300)).await;
    fixture.write(
        "home/.agents/skills/later/SKILL.md",
        &skill("later", "Second."),
    );
    assert!(notified(&mut server, NOTIFY_WITHIN).await);
    assert!(server.description().await.contains("\n- later: Second."));
    server.stop().await;
}

#[tokio::test]
async fn a_miss_rescans_even_with_refresh_and_watch_off_and_is_rate_limited() {
    let fixture = tree();
    let server = serve(&fixture, &["--no-watch", "--refresh-interval", "0"]).await;
    fixture.write(
        "skills/fresh/SKILL.md",
        &skill("fresh", "Added without any watcher."),
    );
    let result = server.call("fresh").await;
    assert!(!is_error(&result), "{}", text(&result));
    assert!(text(&result).starts_with("Loading: fresh\n"));

    // A second miss within a second answers from the current snapshot.
    fixture.write("skills/second/SKILL.md", &skill("second", "Too soon."));
    let started = Instant::now();
    let miss = server.call("second").await;
    if started.elapsed() < Duration::from_millis(900) {
        assert!(
            is_error(&miss),
            "rate-limited: no rescan within a second of the last"
        );
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(text(&server.call("second").await).starts_with("Loading: second\n"));
    server.stop().await;
}

/// The refreshes that found changes, logged so far.
fn refreshes(server: &Server) -> usize {
    let log = server.stderr().text();
    log.lines().filter(|l| l.contains(" refresh: ")).count()
}

#[tokio::test]
async fn a_storm_of_changes_never_breaks_concurrent_calls() {
    let fixture = tree();
    for i in 0..20 {
        fixture.write(
            &format!("skills/stable-{i}/SKILL.md"),
            &skill(&format!("stable-{i}"), "Never touched."),
        );
    }
    let server = Arc::new(serve(&fixture, &["--refresh-interval", "1"]).await);
    let stop = Arc::new(AtomicBool::new(false));
    let storm_rounds = Arc::new(AtomicUsize::new(0));
    // Each client's completed rounds of calls.
    let call_rounds: Arc<Vec<AtomicUsize>> =
        Arc::new((0..8).map(|_| AtomicUsize::new(0)).collect());
    let refreshes_before = refreshes(&server);

    let storm = {
        let stop = Arc::clone(&stop);
        let storm_rounds = Arc::clone(&storm_rounds);
        let root = fixture.root().to_path_buf();
        tokio::task::spawn_blocking(move || {
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                for i in 0..10 {
                    let dir = root.join(format!("skills/churn-{i}"));
                    if round % 2 == 0 {
                        std::fs::create_dir_all(&dir).unwrap();
                        std::fs::write(
                            dir.join("SKILL.md"),
                            skill(&format!("churn-{i}"), &format!("round {round}")),
                        )
                        .unwrap();
                    } else {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
                // Edit the way editors save: write a temporary file, rename it over.
                let temporary = root.join("skills/alpha/.SKILL.md.swp");
                std::fs::write(&temporary, skill("alpha", &format!("rev {round}"))).unwrap();
                std::fs::rename(&temporary, root.join("skills/alpha/SKILL.md")).unwrap();
                round += 1;
                storm_rounds.store(round, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(15));
            }
            round
        })
    };

    let mut clients = tokio::task::JoinSet::new();
    for client in 0..8 {
        let server = Arc::clone(&server);
        let stop = Arc::clone(&stop);
        let call_rounds = Arc::clone(&call_rounds);
        let root = fixture.root().to_path_buf();
        clients.spawn(async move {
            let mut calls = 0;
            while !stop.load(Ordering::Relaxed) {
                let stable = format!("stable-{}", (client + calls) % 20);
                let result = server.call(&stable).await;
                let expected = format!(
                    "Loading: {stable}\nBase directory: {}\n\n{}",
                    root.join("skills").join(&stable).display(),
                    skill(&stable, "Never touched."),
                );
                assert_eq!(text(&result), expected);
                let churn = format!("churn-{}", calls % 10);
                let result = server.call(&churn).await;
                let body = text(&result);
                // A scan may catch a churned SKILL.md between its creation
                // and its write (empty): then it truthfully could not be
                // loaded, until the next scan.
                assert!(
                    body.starts_with(&format!("Loading: {churn}\n"))
                        || body.starts_with(&format!("Skill '{churn}' not found."))
                        || body.starts_with(&format!("Skill '{churn}' could not be loaded: ")),
                    "{churn}: {body}"
                );
                let alpha = server.call("alpha").await;
                assert!(
                    text(&alpha).starts_with("Loading: alpha\n"),
                    "{}",
                    text(&alpha)
                );
                calls += 1;
                call_rounds[client].store(calls, Ordering::Relaxed);
            }
            calls
        });
    }
    // The storm lasts until enough has happened at once: 20 rounds of
    // changes, 5 refreshes that saw changes, and 3 rounds of calls by every
    // client. A server that stalls under it fails the test.
    let enough = async {
        loop {
            let slowest = call_rounds.iter().map(|c| c.load(Ordering::Relaxed)).min();
            if storm_rounds.load(Ordering::Relaxed) >= 20
                && refreshes(&server) >= refreshes_before + 5
                && slowest >= Some(3)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let kept_up = tokio::time::timeout(Duration::from_secs(60), enough).await;
    stop.store(true, Ordering::Relaxed);
    let rounds = storm.await.unwrap();
    let mut total = 0;
    while let Some(calls) = clients.join_next().await {
        total += calls.unwrap();
    }
    let refreshed = refreshes(&server) - refreshes_before;
    assert!(
        kept_up.is_ok(),
        "after 60 s: storm rounds {rounds}, refreshes {refreshed}, call rounds {total}"
    );
    eprintln!("storm rounds {rounds}, refreshes {refreshed}, call rounds {total}");
    let server = Arc::into_inner(server).unwrap();
    let (status, _) = server.stop().await;
    assert!(status.success());
}

/// 3,000 skills, in two identical trees: built once and shared (read only).
fn bulk_trees() -> [std::path::PathBuf; 2] {
    let build = |root: &std::path::Path| {
        for i in 0..3000 {
            let name = format!("bulk-{i:04}");
            std::fs::create_dir(root.join(&name)).unwrap();
            std::fs::write(root.join(&name).join("SKILL.md"), skill(&name, "Bulk.")).unwrap();
        }
    };
    ["bulk-3000-a-v1", "bulk-3000-b-v1"].map(|name| crate::common::shared_tree(name, build))
}

#[test]
fn sigterm_during_a_large_rescan_exits_zero_promptly() {
    let fixture = tree();
    let [first, second] = bulk_trees();
    let link = fixture.path("bulk");
    std::os::unix::fs::symlink(&first, &link).unwrap();
    let mut command = fixture.command(&[
        "--skills-dir",
        "bulk",
        "--no-project",
        "--no-plugins",
        "--no-watch",
        "--refresh-interval",
        "0",
    ]);
    let log = fixture.path("stderr.log");
    let stderr = std::fs::File::create(&log).unwrap();
    let mut raw = Raw::spawn_with(&mut command, stderr.into());
    raw.initialize(Duration::from_secs(60));
    // The same skills in other files: the next rescan parses all 3,000 again.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&second, &link).unwrap();
    // A miss starts the rescan; the ping behind it shows the miss was read,
    // and is answered while the rescan runs. Then the signal.
    raw.send(
        format!(
            "{}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n",
            call(1, "nope")
        )
        .as_bytes(),
    );
    let answer = raw
        .next_message(NOTIFY_WITHIN)
        .expect("the ping is answered");
    assert_eq!(
        answer["id"], 2,
        "the ping comes before the rescan ends: {answer}"
    );
    // SAFETY: kill(2) with a pid we own and a valid signal number.
    let sent = unsafe { libc::kill(raw.child.id() as i32, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let status = wait_for_exit(&mut raw.child, NOTIFY_WITHIN).expect("exits");
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("received SIGTERM; exiting"), "{stderr}");
    let after = raw.rest();
    assert!(
        after.is_empty(),
        "the exit came before the rescan ended, so the miss got no answer: {after:?}"
    );
}

/// The interval's and a miss's debug lines, and the refreshes' (which log
/// `refresh:` at debug when nothing changed, at info when something did).
const SCAN_DEBUG: &str = "info,skillserve::server::registry=debug";

/// A skill whose `SKILL.md` is a symlink to a file in a folder nobody
/// watches, next to `alpha`.
fn tree_with_a_linked_skill() -> Fixture {
    let fixture = tree();
    fixture.write("elsewhere/linked.md", &skill("linked", "Before."));
    std::fs::create_dir(fixture.path("skills/linked")).unwrap();
    std::os::unix::fs::symlink(
        fixture.path("elsewhere/linked.md"),
        fixture.path("skills/linked/SKILL.md"),
    )
    .unwrap();
    fixture
}

/// The log from the watcher's "watching" line on.
fn since_armed(log: &str) -> &str {
    &log[log.find("watching ").expect("the watcher is armed")..]
}

#[tokio::test]
async fn with_the_watcher_healthy_the_interval_rescans_nothing_and_checks_linked_files() {
    let fixture = tree_with_a_linked_skill();
    let mut command = fixture.command(&[
        "--skills-dir",
        "skills",
        "--no-project",
        "--no-plugins",
        "--refresh-interval",
        "1",
    ]);
    command.env("SKILLSERVE_LOG", SCAN_DEBUG);
    let mut server = Server::start(command).await;
    server.watching().await;
    let log = server.stderr().clone();
    log.wait_for(
        "interval: no rescan, the watcher covers every folder; 1 linked SKILL.md files checked, 0 changed",
        3,
    )
    .await;
    let text_so_far = log.text();
    assert!(
        !since_armed(&text_so_far).contains("refresh: "),
        "no rescan while idle:\n{text_so_far}"
    );

    // A miss looks at nothing but the linked file either.
    assert!(is_error(&server.call("nothing-by-this-name").await));
    log.wait_for("a miss: no rescan, the watcher covers every folder; 1 linked SKILL.md files checked, 0 changed", 1)
        .await;
    assert!(!since_armed(&log.text()).contains("refresh: "));

    // No watched folder sees the target change; the next interval does.
    std::fs::write(
        fixture.path("elsewhere/linked.md"),
        skill("linked", "After the link's target changed."),
    )
    .unwrap();
    assert!(notified(&mut server, NOTIFY_WITHIN).await);
    assert!(
        log.text()
            .contains("1 linked SKILL.md files checked, 1 changed")
    );
    assert!(
        server
            .description()
            .await
            .contains("- linked: After the link's target changed.")
    );
    server.stop().await;
}

#[tokio::test]
async fn without_a_watcher_the_interval_rescans_everything() {
    let fixture = tree_with_a_linked_skill();
    let mut command = fixture.command(&[
        "--skills-dir",
        "skills",
        "--no-project",
        "--no-plugins",
        "--no-watch",
        "--refresh-interval",
        "1",
    ]);
    command.env("SKILLSERVE_LOG", SCAN_DEBUG);
    let server = Server::start(command).await;
    let log = server.stderr();
    log.wait_for(
        "interval: rescanning everything (no watcher covers every folder)",
        2,
    )
    .await;
    log.wait_for("refresh: no change (2 skills, 0 files parsed, ", 2)
        .await;
    server.stop().await;
}

#[tokio::test]
async fn with_the_watcher_healthy_a_skill_written_just_before_a_call_is_found() {
    let fixture = tree();
    let server = serve(&fixture, &["--refresh-interval", "0"]).await;
    server.watching().await;
    for round in 0..5 {
        let name = format!("fresh-{round}");
        fixture.write(
            &format!("skills/{name}/SKILL.md"),
            &skill(&name, "Written just before the call."),
        );
        let result = server.call(&name).await;
        assert!(!is_error(&result), "{}", text(&result));
        // Past the rate limit of rescans on a miss.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    server.stop().await;
}
