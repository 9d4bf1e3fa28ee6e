//! The skills manager as an MCP App (`io.modelcontextprotocol/ui`): to a
//! client that declares the UI extension, the server offers the resource
//! `ui://skillserve/app.html` (the page of `ui/`, compiled in), the
//! model-visible tool `manage_skills` that opens it, and the app-only tools
//! the page calls (`_meta.ui.visibility: ["app"]`). A client without the
//! extension is offered none of it: one tool, `skill`, as before.
//!
//! This module knows the extension, who may change what, and the nonce;
//! what the page shows comes from [`crate::manage`], and each change is the
//! CLI command's own library function ([`crate::trust`],
//! [`crate::commands::toggle`], [`crate::sources`]; the plans a person
//! reviews before an install are kept by [`plans`]).
//!
//! Who may change anything (behaviour.md, "The skills app"):
//! - over stdio, the call must carry the nonce embedded in a recent render
//!   of the page ([`nonce`]): the host reads the resource to render it and
//!   the model never receives its body, so a call the model makes up is
//!   refused even by a host that forgets to hide the app-only tools;
//! - over HTTP, the caller's token must grant `admin` (the page in a
//!   browser holds no nonce; the token is the person).
//!
//! Reads need nothing more than reading needs today, but for the usage
//! report (`app_usage`): it says which clients (and so which people) use
//! what, so over HTTP it needs `admin` too; over stdio it is the person's
//! own record, as `skillserve stats` shows it in a terminal.

mod nonce;
pub mod page;
mod plans;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, MetaObject,
    ReadResourceResult, ResourceContents, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Serialize;
use serde_json::{Value, json};

use crate::commands::Stats;
use crate::manage::{self, Catalog, Query, Status};
use crate::server::registry::{Registry, Served};

pub use nonce::Nonces;

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The content type of an MCP App's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The app's resource.
pub const RESOURCE_URI: &str = "ui://skillserve/app.html";
/// The model-visible tool that opens the app.
pub const OPEN_TOOL: &str = "manage_skills";

/// The `_meta` key of a 2026-07-28 request's client capabilities.
const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// The app's state shared by every handler of a server: the nonces of its
/// renders, and the catalog of the snapshot served now.
#[derive(Default)]
pub struct App {
    nonces: Nonces,
    catalog: Mutex<Option<(Weak<Served>, Arc<Catalog>)>>,
    plans: plans::Plans,
    /// A return of free memory is due (after a usage read).
    trim_due: Arc<AtomicBool>,
}

/// Who asks for a change.
#[derive(Clone, Debug)]
pub enum Caller {
    /// The client on stdio: the person at the host (with the page's nonce)
    /// or its model (without).
    Stdio,
    /// A client of `serve --http`: the token's label, and whether it grants
    /// `admin`.
    Http { who: String, admin: bool },
}

/// Whether the client that sent a request declares the UI extension: in
/// the request's own `_meta` (2026-07-28), else in `initialize`. A
/// declaration that lists `mimeTypes` must list [`MIME_TYPE`].
pub fn declared(context: &RequestContext<RoleServer>) -> bool {
    let meta = &context.meta.0.0;
    let extension = match meta.get(CLIENT_CAPABILITIES_META) {
        Some(capabilities) => capabilities
            .get("extensions")
            .and_then(|e| e.get(EXTENSION))
            .cloned(),
        None => context
            .peer
            .peer_info()
            .and_then(|info| {
                info.capabilities
                    .extensions
                    .as_ref()?
                    .get(EXTENSION)
                    .cloned()
            })
            .map(Value::Object),
    };
    let Some(Value::Object(extension)) = extension else {
        return false;
    };
    match extension.get("mimeTypes") {
        None => true,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(MIME_TYPE)),
        Some(_) => false,
    }
}

/// What an app-only tool does, which decides who may call it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// Reads what the server serves: anyone who may read.
    Read,
    /// Fetches a source (runs git, or downloads) and keeps what it found
    /// for review; changes nothing on disk. Only a caller who may change
    /// things may make the server fetch.
    Fetch,
    /// Changes `config.toml`, `trusted.toml`, the lock or the store.
    Change,
    /// Reads who used what (the usage file): over HTTP only a caller who
    /// may change things may read it; over stdio anyone, as the CLI.
    Private,
}

/// An app-only tool: name, title, description, arguments (JSON Schema
/// properties), required arguments, and what it does.
type AppTool = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    Effect,
);

/// The app-only tools.
const APP_TOOLS: &[AppTool] = &[
    (
        "app_overview",
        "Skills manager: overview",
        "What the catalog holds (counts by status, source, root; the clients) and whether this caller may change anything.",
        "{}",
        &[],
        Effect::Read,
    ),
    (
        "app_catalog",
        "Skills manager: catalog",
        "A page of the catalog: every skill with its source, root, status and the clients that see it; searched with the server's search index, filtered by source, root, client and status.",
        QUERY_PROPERTIES,
        &[],
        Effect::Read,
    ),
    (
        "app_clients",
        "Skills manager: clients",
        "The clients × skills matrix of a page of the catalog: who is shown each skill, and why not.",
        QUERY_PROPERTIES,
        &[],
        Effect::Read,
    ),
    (
        "app_skill",
        "Skills manager: skill",
        "One skill: its SKILL.md, files with sizes and digests, security findings with their lines, status and clients.",
        r#"{"id": {"type": "string", "description": "The skill's folder, as the catalog's `id`."}}"#,
        &["id"],
        Effect::Read,
    ),
    (
        "app_file",
        "Skills manager: file",
        "One file of a skill: text, an image (base64) or a description of a binary file.",
        r#"{"id": {"type": "string", "description": "The skill's folder, as the catalog's `id`."}, "path": {"type": "string", "description": "The file, relative to the skill's folder."}}"#,
        &["id", "path"],
        Effect::Read,
    ),
    (
        "app_sources",
        "Skills manager: sources",
        "The installed sources of sources.lock: each with its URL, commit, skills and when it was added and updated (`skillserve sources --json`).",
        "{}",
        &[],
        Effect::Read,
    ),
    (
        "app_usage",
        "Skills manager: usage",
        "Which skills are used, as `skillserve stats --json` reports them: the skills loaded in the last days, most used first (with counts per surface, per client and per day, files read, the last load), the skills served now that were not loaded (with where each lives), loads per client and per source, and whether uses are recorded now.",
        r#"{"days": {"type": "integer", "minimum": 1, "maximum": 90, "description": "The last N days, today included (UTC days; default 30)."}, "client": {"type": "string", "description": "Only the loads of clients whose names match this glob (e.g. `claude*`)."}}"#,
        &[],
        Effect::Private,
    ),
    (
        "app_add",
        "Skills manager: review a source",
        "Fetch a source (git repository or published index) and return the plan `skillserve add` shows: each skill with its files, scripts and findings. Nothing is installed: the plan is kept on the server for `app_install`.",
        r#"{"source": {"type": "string", "description": "owner/repo, a git URL, the path of a local git checkout, or https://host for a published index."}, "id": {"type": "string", "description": "The source's id (default: from the URL)."}, "ref": {"type": "string", "description": "A branch, tag or commit (git)."}, "path": {"type": "string", "description": "A folder of the repository to look in."}, "skills": {"type": "array", "items": {"type": "string"}, "description": "Only these skills."}, "nonce": {"type": "string"}}"#,
        &["source"],
        Effect::Fetch,
    ),
    (
        "app_install",
        "Skills manager: install",
        "Install the plan of `app_add` exactly as it was reviewed (`skillserve add`'s yes).",
        REVIEWED_PROPERTIES,
        &["plan", "digest"],
        Effect::Change,
    ),
    (
        "app_update",
        "Skills manager: check a source for updates",
        "Fetch an installed source again and return the change report `skillserve update` shows: per skill unchanged, changed (files, scripts, the SKILL.md diff side by side), new or gone. Nothing is installed: the report is kept on the server for `app_apply`.",
        r#"{"id": {"type": "string", "description": "The installed source's id."}, "nonce": {"type": "string"}}"#,
        &["id"],
        Effect::Fetch,
    ),
    (
        "app_apply",
        "Skills manager: apply an update",
        "Install the update of `app_update` exactly as it was reviewed (`skillserve update`'s yes).",
        REVIEWED_PROPERTIES,
        &["plan", "digest"],
        Effect::Change,
    ),
    (
        "app_remove",
        "Skills manager: remove a source",
        "Remove an installed source and its skills (`skillserve remove`).",
        r#"{"id": {"type": "string", "description": "The installed source's id."}, "nonce": {"type": "string"}}"#,
        &["id"],
        Effect::Change,
    ),
    (
        "app_enable",
        "Skills manager: enable",
        "Enable a skill for every client, or in one client's profile (`skillserve enable`).",
        TOGGLE_PROPERTIES,
        &["name"],
        Effect::Change,
    ),
    (
        "app_disable",
        "Skills manager: disable",
        "Disable a skill for every client, or in one client's profile (`skillserve disable`).",
        TOGGLE_PROPERTIES,
        &["name"],
        Effect::Change,
    ),
    (
        "app_trust",
        "Skills manager: trust",
        "Approve a quarantined skill as it was reviewed (`skillserve trust`): refused when its files changed since.",
        r#"{"name": {"type": "string"}, "digest": {"type": "string", "description": "The digest of the skill as reviewed (`app_skill`'s `digest`)."}, "nonce": {"type": "string"}}"#,
        &["name", "digest"],
        Effect::Change,
    ),
    (
        "app_untrust",
        "Skills manager: untrust",
        "Withdraw the approvals of a skill (`skillserve untrust`).",
        r#"{"name": {"type": "string"}, "nonce": {"type": "string"}}"#,
        &["name"],
        Effect::Change,
    ),
];

const QUERY_PROPERTIES: &str = r#"{
    "query": {"type": "string", "description": "Words to search names and descriptions for."},
    "source": {"type": "string", "description": "`user`, `project`, `custom`, `installed`, `plugin`, or `installed:<id>`."},
    "root": {"type": "string", "description": "A skills folder, as the overview lists it."},
    "client": {"type": "string", "description": "A client's id, as the overview lists it: only skills it is shown."},
    "status": {"type": "string", "enum": ["served", "hidden", "shadowed", "quarantined", "broken"]},
    "offset": {"type": "integer", "minimum": 0},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500}
}"#;

const REVIEWED_PROPERTIES: &str = r#"{
    "plan": {"type": "string", "description": "The plan's id, as `app_add` or `app_update` returned it."},
    "digest": {"type": "string", "description": "The plan's digest, as reviewed."},
    "allow_risky": {"type": "boolean", "description": "Go ahead although skills have error-level security findings (`--allow-risky`)."},
    "nonce": {"type": "string"}
}"#;

const TOGGLE_PROPERTIES: &str = r#"{
    "name": {"type": "string", "description": "The skill's name."},
    "client": {"type": "string", "description": "A client's profile (`[clients.\"<client>\"]`); omit it for every client."},
    "nonce": {"type": "string", "description": "The nonce of the page's render (stdio)."}
}"#;

/// What the tool `name` does.
fn effect(name: &str) -> Effect {
    APP_TOOLS
        .iter()
        .find(|(tool, ..)| *tool == name)
        .map_or(Effect::Read, |(.., effect)| *effect)
}

/// Whether `name` is one of the app's tools (the opener included).
pub fn is_app_tool(name: &str) -> bool {
    name == OPEN_TOOL || APP_TOOLS.iter().any(|(tool, ..)| *tool == name)
}

fn object(text: &str) -> JsonObject {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => object,
        _ => unreachable!("the tool tables hold JSON objects"),
    }
}

/// The tools a client with the UI extension is offered besides `skill`.
pub fn tools() -> Vec<Tool> {
    let mut open_meta = JsonObject::new();
    open_meta.insert("ui".into(), json!({ "resourceUri": RESOURCE_URI }));
    // The flat key of the extension's drafts, which some hosts still read.
    open_meta.insert("ui/resourceUri".into(), RESOURCE_URI.into());
    let open_schema = object(
        r#"{"type": "object", "properties": {"view": {"type": "string", "enum": ["catalog", "sources", "quarantine", "clients", "usage"], "description": "The view to open on (default: catalog)."}}}"#,
    );
    let mut tools = vec![
        Tool::new(
            OPEN_TOOL,
            "Open the skills manager: browse every skill, see where each comes from and which clients see it, which skills are used and which are not, review and install sources, approve quarantined skills, and enable or disable skills per client. Call it when the user asks to see, manage, install, update, trust or disable skills, or which skills they use.",
            Arc::new(open_schema),
        )
        .with_title("Open the skills manager")
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
        .with_meta(MetaObject(open_meta)),
    ];
    for (name, title, description, properties, required, effect) in APP_TOOLS {
        let schema = json!({
            "type": "object",
            "properties": object(properties),
            "required": required,
        });
        let Value::Object(schema) = schema else {
            unreachable!("json! of an object")
        };
        let mut meta = JsonObject::new();
        meta.insert(
            "ui".into(),
            json!({ "resourceUri": RESOURCE_URI, "visibility": ["app"] }),
        );
        tools.push(
            Tool::new(*name, *description, Arc::new(schema))
                .with_title(*title)
                .with_annotations(
                    ToolAnnotations::new()
                        .read_only(*effect != Effect::Change)
                        .destructive(*effect == Effect::Change)
                        // Installing or removing twice is not the same as once.
                        .idempotent(!matches!(*name, "app_install" | "app_apply" | "app_remove"))
                        .open_world(*effect == Effect::Fetch),
                )
                .with_meta(MetaObject(meta)),
        );
    }
    tools
}

impl App {
    /// The page, with a fresh nonce embedded, as `resources/read` returns
    /// it.
    pub fn read(&self) -> Result<ReadResourceResult, ErrorData> {
        let nonce = self.nonces.issue().ok_or_else(|| {
            ErrorData::internal_error("the OS gave no random bytes for the page's nonce", None)
        })?;
        let mut meta = JsonObject::new();
        // No external origin: the default CSP of the extension is enough.
        meta.insert("ui".into(), json!({ "prefersBorder": false }));
        let contents = ResourceContents::TextResourceContents {
            uri: RESOURCE_URI.to_owned(),
            mime_type: Some(MIME_TYPE.to_owned()),
            text: page::html(Some(&nonce)),
            meta: Some(MetaObject(meta)),
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// The catalog of `served`, computed on a blocking thread the first
    /// time it is asked for.
    async fn catalog(&self, registry: &Registry, served: &Arc<Served>) -> Arc<Catalog> {
        {
            let kept = self.catalog.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((of, catalog)) = kept.as_ref()
                && Weak::ptr_eq(of, &Arc::downgrade(served))
            {
                return Arc::clone(catalog);
            }
        }
        let for_catalog = Arc::clone(served);
        let settings = registry.settings();
        let catalog = tokio::task::spawn_blocking(move || {
            let catalog = Arc::new(Catalog::new(
                &for_catalog.snapshot,
                &for_catalog.profiles,
                settings.config.home.as_deref(),
            ));
            // One decision per client column was made and dropped.
            crate::memory::release_free_memory();
            catalog
        })
        .await
        .unwrap_or_else(|err| std::panic::resume_unwind(err.into_panic()));
        *self.catalog.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((Arc::downgrade(served), Arc::clone(&catalog)));
        catalog
    }

    /// Answers a call of one of the app's tools.
    pub async fn call(
        &self,
        registry: &Arc<Registry>,
        request: &CallToolRequestParams,
        caller: Caller,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.as_ref();
        let arguments = request.arguments.clone().unwrap_or_default();
        let effect = effect(name);
        if effect == Effect::Read {
            return self.read_tool(registry, name, &arguments, &caller).await;
        }
        if effect == Effect::Private {
            if let Caller::Http { admin: false, .. } = caller {
                let refusal = "this token may read the catalog but not which clients use which skills: the usage report needs a token with admin (`skillserve token new LABEL --admin`, or the OAuth scope `skills:admin`)";
                tracing::warn!(
                    target: "skillserve::app",
                    "{} {name}: refused: {refusal}",
                    who(&caller)
                );
                return Ok(refused(refusal));
            }
            return self.read_tool(registry, name, &arguments, &caller).await;
        }
        if let Err(refusal) = self.authorize(&arguments, &caller) {
            tracing::warn!(
                target: "skillserve::app",
                "{} {name} {}: refused: {refusal}",
                who(&caller),
                subject(&arguments)
            );
            return Ok(refused(&refusal));
        }
        let who = who(&caller);
        let result = match name {
            "app_add" => self.plans.add(registry, &arguments, &who).await,
            "app_update" => self.plans.update(registry, &arguments, &who).await,
            "app_install" => self.plans.install(registry, &arguments, &who).await,
            "app_apply" => self.plans.apply(registry, &arguments, &who).await,
            "app_remove" => self.plans.remove(registry, &arguments).await,
            _ => self.change(registry, name, &arguments).await,
        };
        match &result {
            Ok((text, _)) => tracing::info!(
                target: "skillserve::app",
                "{who} {name} {}: done: {}",
                subject(&arguments),
                crate::text::printable(text)
            ),
            Err(message) => tracing::info!(
                target: "skillserve::app",
                "{who} {name} {}: failed: {}",
                subject(&arguments),
                crate::text::printable(message)
            ),
        }
        if effect == Effect::Change && result.is_ok() {
            // The next read shows the change: wait for the refresh that
            // reads it.
            let refreshed = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                registry.refresh_and_wait(),
            )
            .await;
            if refreshed.is_err() {
                tracing::warn!("the refresh after a change of the skills manager took over 10 s");
            }
        }
        Ok(match result {
            Ok((text, value)) => structured(text, value),
            Err(message) => failed(&message),
        })
    }

    /// Hands free heap pages back to the system a second after a usage
    /// read, once its answer is written: at 10,000 skills the report of the
    /// unused ones is megabytes the allocator would otherwise keep (RSS
    /// +15.6 MiB after five reads, `benches/app.py`). One at a time.
    fn release_memory_soon(&self) {
        if self.trim_due.swap(true, Ordering::AcqRel) {
            return;
        }
        let due = Arc::clone(&self.trim_due);
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            due.store(false, Ordering::Release);
            let _ = tokio::task::spawn_blocking(crate::memory::release_free_memory).await;
        });
    }

    /// Drops what the app keeps on disk (the fetched files of plans not
    /// installed): the server is stopping.
    pub fn close(&self) {
        self.plans.clear();
    }

    /// Why `caller` may not change anything, if it may not.
    fn authorize(&self, arguments: &JsonObject, caller: &Caller) -> Result<(), String> {
        match caller {
            Caller::Stdio => {
                let nonce = arguments.get("nonce").and_then(Value::as_str).unwrap_or("");
                if self.nonces.accepts(nonce) {
                    Ok(())
                } else if nonce.is_empty() {
                    Err("changes are made from the skills manager's page only: this call carries no nonce of a render of it. Ask the user to open the skills manager (`manage_skills`) and make the change there.".to_owned())
                } else {
                    Err("this call's nonce is not that of a recent render of the skills manager (the server restarted, or the page is old): open the skills manager again.".to_owned())
                }
            }
            Caller::Http { admin: true, .. } => Ok(()),
            Caller::Http { admin: false, .. } => Err(
                "this token may read the catalog but not change it: changes need a token with admin (`skillserve token new LABEL --admin`, or the OAuth scope `skills:admin`)".to_owned(),
            ),
        }
    }

    async fn read_tool(
        &self,
        registry: &Arc<Registry>,
        name: &str,
        arguments: &JsonObject,
        caller: &Caller,
    ) -> Result<CallToolResult, ErrorData> {
        let served = registry.current();
        match name {
            OPEN_TOOL => {
                let catalog = self.catalog(registry, &served).await;
                let facets = catalog.of(&served.snapshot).facets();
                let view = arguments
                    .get("view")
                    .and_then(Value::as_str)
                    .unwrap_or("catalog");
                let text = format!(
                    "The skills manager is open ({view}): {} skills ({}).",
                    facets.total,
                    counts(&facets.statuses)
                );
                Ok(structured(
                    text,
                    json!({ "view": view, "statuses": facets.statuses, "total": facets.total }),
                ))
            }
            "app_overview" => {
                let catalog = self.catalog(registry, &served).await;
                let facets = catalog.of(&served.snapshot).facets();
                let (rule, allowed) = match caller {
                    Caller::Stdio => ("nonce", true),
                    Caller::Http { admin, .. } => ("admin", *admin),
                };
                let text = format!(
                    "{} skills ({}); {} clients",
                    facets.total,
                    counts(&facets.statuses),
                    facets.clients.len()
                );
                Ok(structured(
                    text,
                    json!({
                        "version": env!("CARGO_PKG_VERSION"),
                        "transport": rule_transport(caller),
                        "changes": { "rule": rule, "allowed": allowed },
                        "facets": facets,
                    }),
                ))
            }
            "app_catalog" | "app_clients" => {
                let query = match query_of(arguments) {
                    Ok(query) => query,
                    Err(message) => return Ok(failed(&message)),
                };
                let catalog = self.catalog(registry, &served).await;
                let matrix = name == "app_clients";
                let value = tokio::task::spawn_blocking(move || {
                    let of = catalog.of(&served.snapshot);
                    if matrix {
                        to_value(&manage::clients::matrix(&of, &served.profiles, &query))
                    } else {
                        to_value(&of.page(&query))
                    }
                })
                .await
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                let text = format!(
                    "{} of {} skills match; rows {}–{}",
                    value["matched"],
                    value["total"],
                    value["offset"],
                    value["offset"].as_u64().unwrap_or(0)
                        + value["rows"].as_array().map_or(0, Vec::len) as u64
                );
                Ok(structured(text, value))
            }
            "app_skill" | "app_file" => {
                let Some(id) = arguments.get("id").and_then(Value::as_str) else {
                    return Ok(failed(
                        "`id` is missing: give a skill's `id` from the catalog",
                    ));
                };
                let id = id.to_owned();
                let path = arguments
                    .get("path")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if name == "app_file" && path.is_none() {
                    return Ok(failed("`path` is missing: give a file of the skill"));
                }
                let catalog = self.catalog(registry, &served).await;
                let registry = Arc::clone(registry);
                let answer = tokio::task::spawn_blocking(move || {
                    let of = catalog.of(&served.snapshot);
                    let Some(found) = of.find(&id) else {
                        return Err(format!(
                            "no skill is in {id} now (the catalog changed): go back to the catalog"
                        ));
                    };
                    match path {
                        None => Ok(to_value(&manage::skill::view(&found, registry.files()))),
                        Some(path) => manage::skill::file(found.skill, registry.files(), &path)
                            .map(|file| to_value(&file))
                            .map_err(|err| format!("{path}: {err}")),
                    }
                })
                .await
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                Ok(match answer {
                    Ok(value) => {
                        let text = value
                            .get("name")
                            .or_else(|| value.get("path"))
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        structured(text, value)
                    }
                    Err(message) => failed(&message),
                })
            }
            "app_usage" => {
                let (days, client) = match usage_query(arguments) {
                    Ok(query) => query,
                    Err(message) => return Ok(failed(&message)),
                };
                let registry = Arc::clone(registry);
                let gathered = tokio::task::spawn_blocking(move || {
                    // The uses still in memory are written first, so the
                    // report counts the loads just made, and `skillserve
                    // stats` reads the same numbers from the file.
                    registry.usage().flush(USAGE_PATIENCE);
                    let settings = registry.settings();
                    Stats::gather(
                        &settings,
                        served.snapshot.skills(),
                        crate::usage::Day::today(),
                        days,
                        client.as_deref(),
                    )
                })
                .await
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                self.release_memory_soon();
                Ok(match gathered {
                    Ok(stats) => structured(usage_text(&stats), to_value(&stats)),
                    Err(err) => failed(&err.to_string()),
                })
            }
            "app_sources" => {
                let context = match plans::context(registry) {
                    Ok(context) => context,
                    Err(message) => return Ok(failed(&message)),
                };
                let listed = tokio::task::spawn_blocking(move || {
                    let lock = crate::sources::installed(&context)?;
                    let sources = to_value(&crate::sources::listed(&lock));
                    Ok::<_, crate::sources::SourceError>((sources, lock.sources.len(), context))
                })
                .await
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                Ok(match listed {
                    Ok((sources, count, context)) => structured(
                        format!("{count} source{}", crate::text::plural(count)),
                        json!({
                            "lock": context.paths.lock.display().to_string(),
                            "store": context.paths.store.display().to_string(),
                            "sources": sources,
                        }),
                    ),
                    Err(err) => failed(&err.to_string()),
                })
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool '{other}'"),
                None,
            )),
        }
    }

    /// Makes one change, as its CLI command does; the text and the value
    /// of what happened, or why nothing was.
    async fn change(
        &self,
        registry: &Arc<Registry>,
        name: &str,
        arguments: &JsonObject,
    ) -> Result<(String, Value), String> {
        let text_argument = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let skill = text_argument("name").ok_or("`name` is missing: give the skill's name")?;
        let settings = registry.settings();
        let registry_for_work = Arc::clone(registry);
        let done = match name {
            "app_enable" | "app_disable" => {
                use crate::commands::{Switch, ToggleRequest};
                let switch = if name == "app_disable" {
                    Switch::Disable
                } else {
                    Switch::Enable
                };
                let client = text_argument("client");
                let served = registry.current();
                tokio::task::spawn_blocking(move || {
                    let request = ToggleRequest {
                        switch,
                        name: &skill,
                        client: client.as_deref(),
                    };
                    // The CLI's own `enable` / `disable`.
                    let toggled =
                        crate::commands::toggle(&settings, &served.snapshot, &request, &|| {
                            registry_for_work.load_settings()
                        })
                        .map_err(|err| err.to_string())?;
                    let changed = toggled.change != crate::config::edit::Change::Unchanged;
                    let scope = match &toggled.client {
                        None => "for every client".to_owned(),
                        Some(glob) => format!("in [clients.{}]", crate::config::file::quoted(glob)),
                    };
                    let disable = switch == Switch::Disable;
                    let file = toggled.path.display();
                    let text = match (changed, disable) {
                        (true, true) => format!("Disabled '{}' {scope} in {file}.", toggled.name),
                        (true, false) => format!("Enabled '{}' {scope} in {file}.", toggled.name),
                        (false, true) => format!(
                            "'{}' is already disabled {scope} in {file}; nothing changed.",
                            toggled.name
                        ),
                        (false, false) => format!(
                            "'{}' is not disabled {scope} in {file}; nothing changed.",
                            toggled.name
                        ),
                    };
                    let still_hidden: Vec<Value> = toggled
                        .still_hidden
                        .iter()
                        .map(|(name, why)| json!({"name": name, "reason": why}))
                        .collect();
                    Ok::<_, String>((
                        text,
                        json!({
                            "name": toggled.name,
                            "client": toggled.client,
                            "disabled": disable,
                            "changed": changed,
                            "file": toggled.path.display().to_string(),
                            "unknown": toggled.unknown,
                            "still_hidden": still_hidden,
                        }),
                    ))
                })
                .await
                .map_err(|err| err.to_string())??
            }
            "app_trust" => {
                let reviewed = text_argument("digest")
                    .ok_or("`digest` is missing: give the digest of the skill as reviewed")?;
                let served = registry.current();
                tokio::task::spawn_blocking(move || {
                    let review =
                        crate::trust::review(&served.snapshot, registry_for_work.files(), &skill)
                            .map_err(|err| err.to_string())?;
                    if review.digest != reviewed {
                        return Err(crate::trust::TrustError::Changed {
                            name: review.skill.name.to_string(),
                            reviewed,
                            now: review.digest,
                        }
                        .to_string());
                    }
                    let approved = crate::trust::approve(&settings.config, &review)
                        .map_err(|err| err.to_string())?;
                    Ok::<_, String>((
                        format!(
                            "Approved '{}' as it is now; recorded in {}.",
                            approved.name,
                            approved.file.display()
                        ),
                        to_value(&approved),
                    ))
                })
                .await
                .map_err(|err| err.to_string())??
            }
            "app_untrust" => tokio::task::spawn_blocking(move || {
                let withdrawn = crate::trust::withdraw(&settings.config, &skill)
                    .map_err(|err| err.to_string())?;
                Ok::<_, String>((
                    format!(
                        "Withdrew {} approval{} of '{}'.",
                        withdrawn.removed,
                        crate::text::plural(withdrawn.removed),
                        withdrawn.name
                    ),
                    to_value(&withdrawn),
                ))
            })
            .await
            .map_err(|err| err.to_string())??,
            other => return Err(format!("unknown change '{other}'")),
        };
        Ok(done)
    }
}

fn rule_transport(caller: &Caller) -> &'static str {
    match caller {
        Caller::Stdio => "stdio",
        Caller::Http { .. } => "http",
    }
}

/// Who asks, for the log line of a change.
fn who(caller: &Caller) -> String {
    match caller {
        Caller::Stdio => "stdio client".to_owned(),
        Caller::Http { who, .. } => format!("http {}", crate::text::printable(who)),
    }
}

/// What a change is about, for its log line: a skill (and a client), a
/// source, or a plan.
fn subject(arguments: &JsonObject) -> String {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let about = text("source").or_else(|| text("id"));
    if let (None, Some(about)) = (text("name"), about) {
        return format!("'{}'", crate::text::printable(about));
    }
    if let (None, Some(plan)) = (text("name"), text("plan")) {
        return format!("plan {}", crate::text::printable(plan));
    }
    let name = text("name").unwrap_or("");
    let client = text("client");
    match client {
        Some(client) => format!(
            "'{}' for '{}'",
            crate::text::printable(name),
            crate::text::printable(client)
        ),
        None => format!("'{}'", crate::text::printable(name)),
    }
}

fn counts(statuses: &std::collections::BTreeMap<&'static str, usize>) -> String {
    Status::ALL
        .iter()
        .filter_map(|s| {
            let n = *statuses.get(s.as_str())?;
            (n > 0).then(|| format!("{n} {}", s.as_str()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How long a usage read waits for the uses in memory to be written.
const USAGE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// A client glob longer than this is refused (a client's name is kept to
/// 64 characters).
const MAX_CLIENT_GLOB_CHARS: usize = 256;

/// The days and client glob of a usage read, bounded as `stats` bounds
/// `--days`.
fn usage_query(arguments: &JsonObject) -> Result<(u32, Option<String>), String> {
    let range = crate::commands::STATS_DAYS;
    let days = match arguments.get("days") {
        None | Some(Value::Null) => crate::commands::STATS_DEFAULT_DAYS,
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                format!(
                    "`days` must be a whole number from {} to {} (usage is kept {} days)",
                    range.start(),
                    range.end(),
                    range.end()
                )
            })?,
    };
    let client = match arguments.get("client") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) if s.chars().count() > MAX_CLIENT_GLOB_CHARS => {
            return Err(format!(
                "`client` is longer than {MAX_CLIENT_GLOB_CHARS} characters"
            ));
        }
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(_) => return Err("`client` must be a string".to_owned()),
    };
    Ok((days, client))
}

/// The usage read's line: the figures, or that nothing is recorded and how
/// to turn it on.
fn usage_text(stats: &Stats) -> String {
    let report = &stats.report;
    let plural = crate::text::plural;
    let loads: u64 = report.skills.iter().map(|s| s.loads).sum();
    let served: usize = report.sources.iter().map(|s| s.skills).sum();
    let figures = format!(
        "{loads} load{} of {} skill{} over the last {} day{}; {} of {served} skill{} served not loaded",
        plural(loads as usize),
        report.skills.len(),
        plural(report.skills.len()),
        report.days,
        plural(report.days as usize),
        report.unused.len(),
        plural(served)
    );
    match (&stats.file, &stats.off_by, &stats.turn_on) {
        (None, ..) => {
            "Usage is not recorded: there is no data folder (HOME is not set).".to_owned()
        }
        (Some(_), Some(by), Some(how)) => format!(
            "Usage is not recorded: it is off ({by}); to record it, {how}. Recorded before: {figures}."
        ),
        _ => format!(
            "{}{figures}.",
            if stats.found {
                ""
            } else {
                "No use recorded yet: "
            }
        ),
    }
}

/// The catalog query of a call's arguments.
fn query_of(arguments: &JsonObject) -> Result<Query, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let number = |key: &str, default: usize| -> Result<usize, String> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("`{key}` must be a whole number")),
        }
    };
    let status = match text("status")? {
        None => None,
        Some(s) => Some(Status::parse(&s).ok_or_else(|| {
            format!("`status` {s:?} is not one of served, hidden, shadowed, quarantined, broken")
        })?),
    };
    let text_query = text("query")?.unwrap_or_default();
    if text_query.chars().count() > crate::config::MAX_QUERY_CHARS {
        return Err(format!(
            "`query` is longer than {} characters",
            crate::config::MAX_QUERY_CHARS
        ));
    }
    Ok(Query {
        text: text_query,
        source: text("source")?,
        root: text("root")?,
        client: text("client")?,
        status,
        offset: number("offset", 0)?,
        limit: number("limit", 100)?,
    })
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A result with `text` for the model and text-only hosts, and `value` as
/// structured content for the page.
fn structured(text: String, value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A tool error: what went wrong, nothing changed.
fn failed(message: &str) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(message.to_owned())]);
    result.structured_content = Some(json!({ "error": { "code": "failed", "message": message } }));
    result
}

/// A change this caller may not make.
fn refused(message: &str) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!("Refused: {message}"))]);
    result.structured_content =
        Some(json!({ "error": { "code": "forbidden", "message": message } }));
    result
}
