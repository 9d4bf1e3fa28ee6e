//! The MCP skills extension (SEP-2640, `io.modelcontextprotocol/skills`):
//! `skills/list` and `skills/get` (behaviour.md §11). The files themselves
//! are read through `resources/read` ([`super::resources`]).
//!
//! An entry is the skill's `SKILL.md` URI, its frontmatter as JSON, and every
//! file of the skill with its SHA-256 digest and size, or `"dynamic"` when
//! the listing stopped at a bound or a file could not be hashed. Listings and
//! digests come from [`Files`], computed when a client asks and kept while
//! the files are unchanged; never at start-up. Both run on a blocking thread.

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, GetSkillResult, ListSkillsResult, MetaObject, PaginatedRequestParams,
    Skill as Entry, SkillFrontmatter, SkillResource, SkillResources,
};

use crate::files::Files;
use crate::parallel;
use crate::profiles::View;
use crate::roots::Origin;
use crate::server::page::{self, Page};
use crate::server::resources::in_uri;
use crate::skill::Skill;
use crate::uri;

/// How long a client may treat an answer as fresh: the default rescan
/// interval. Changes to the set of skills are announced sooner, by
/// `resources/list_changed`.
pub const TTL_MS: u64 = 30_000;

/// `skills/list`: the shown skills whose names the extension accepts, in
/// the tool description's order, a page at a time.
pub fn list(
    view: &View,
    files: &Files,
    request: Option<&PaginatedRequestParams>,
) -> Result<ListSkillsResult, ErrorData> {
    let listable = view.listable(|skill| uri::unlistable(skill).is_none());
    let Page { items, next_cursor } =
        page::page(listable, request, "skills/list", |&c| &*view.skill(c).name)?;
    // A page's skills are listed, checked and hashed on several threads: a
    // cached page is mostly a `stat` per file, a cold one reading and
    // hashing every file.
    let threads = if items.len() < PARALLEL_FROM {
        1
    } else {
        parallel::threads()
    };
    let parts = parallel::chunks(items, threads, |part, _| {
        let mut tally = Tally::default();
        let entries: Vec<Entry> = part
            .iter()
            .map(|&c| entry(view.skill(c), files, &mut tally))
            .collect();
        (entries, tally)
    });
    let mut tally = Tally::default();
    let mut entries = Vec::with_capacity(items.len());
    for (part, counted) in parts {
        entries.extend(part);
        tally.hashed += counted.hashed;
        tally.kept += counted.kept;
    }
    tracing::debug!(
        "skills/list: {} skills, {} files: {} hashed, {} digests kept",
        items.len(),
        tally.hashed + tally.kept,
        tally.hashed,
        tally.kept
    );
    Ok(ListSkillsResult {
        next_cursor,
        ttl_ms: Some(TTL_MS),
        cache_scope: Some(CacheScope::Private),
        ..ListSkillsResult::with_all_items(entries)
    })
}

/// `skills/get`: the entry of the skill whose `SKILL.md` has exactly this
/// URI, and the skill (for the usage record); anything else is invalid
/// params, saying why.
pub fn get(view: &View, files: &Files, uri: &str) -> Result<(GetSkillResult, Skill), ErrorData> {
    let unknown = |why: String| ErrorData::invalid_params(format!("{uri}: {why}"), None);
    let skill = match uri::locate(view, uri) {
        Some((skill, rel)) if rel == uri::SKILL_MD => skill,
        _ => {
            return Err(unknown(
                "no served skill has this SKILL.md URI; skills/list lists them".into(),
            ));
        }
    };
    let own = uri::skill_md(&skill.name);
    if own != uri {
        return Err(unknown(format!("the skill '{}' is at {own}", skill.name)));
    }
    if let Some(unlistable) = uri::unlistable(skill) {
        return Err(unknown(format!(
            "the skill '{}' is not offered through the skills extension ({}); the `skill` tool serves it",
            skill.name, unlistable.why
        )));
    }
    let result = GetSkillResult::new(entry(skill, files, &mut Tally::default()))
        .with_ttl_ms(TTL_MS)
        .with_cache_scope(CacheScope::Private);
    Ok((result, skill.clone()))
}

/// Pages of at least this many skills are made on several threads.
const PARALLEL_FROM: usize = 16;

/// How many digests a request computed, and how many it found kept.
#[derive(Default)]
struct Tally {
    hashed: usize,
    kept: usize,
}

/// The entry of `skill`, a skill whose name the extension accepts
/// ([`View::listable`]). Valid by construction, so it is checked only in
/// debug builds (here, and a whole page in [`super::dispatch`], which answers
/// most pages without rmcp's check): every URI is made by [`uri::of`] under
/// the skill's own, the listing's paths are distinct, and [`resources`]
/// falls back to `"dynamic"` unless the skill's own file is listed exactly
/// once.
fn entry(skill: &Skill, files: &Files, tally: &mut Tally) -> Entry {
    let parsed = &skill.parsed;
    let mut frontmatter = SkillFrontmatter::new(parsed.name.as_ref(), parsed.description.as_ref());
    frontmatter.extra = parsed.fields().clone();
    let mut entry = Entry::new(
        uri::skill_md(&skill.name),
        frontmatter,
        resources(skill, files, tally),
    );
    if let Some(origin) = skill.origin() {
        entry = entry.with_meta(source_meta(origin));
    }
    debug_assert_eq!(entry.validate(), Ok(()), "{}", skill.name);
    entry
}

/// The `_meta` key that says where an installed skill came from (SEP-2640
/// asks hosts to show a skill's provenance).
pub const SOURCE_META_KEY: &str = "io.github.skillserve/source";

/// `{"io.github.skillserve/source": {id, kind, url, version, path, digest}}`
/// (behaviour.md, "Sources"), with `signed_by` (`format`, `key`,
/// `principal`, `object`) when a trusted signer signed it, and `lock`
/// (`"project"`) for a skill of the project's `skills.lock`.
fn source_meta(origin: &Origin) -> MetaObject {
    let mut source = serde_json::json!({
        "id": origin.id,
        "kind": origin.kind,
        "url": origin.url,
        "version": origin.version,
        "path": origin.path,
        "digest": origin.digest,
    });
    if let Some(signer) = &origin.signer {
        source["signed_by"] = serde_json::json!(signer);
    }
    if origin.scope == crate::lock::Scope::Project {
        source["lock"] = serde_json::json!("project");
    }
    let mut meta = rmcp::model::JsonObject::new();
    meta.insert(SOURCE_META_KEY.to_owned(), source);
    MetaObject(meta)
}

/// Every file of the skill with its digest, or `"dynamic"` when the listing
/// is incomplete, lacks the skill's own file, or a file cannot be hashed now.
fn resources(skill: &Skill, files: &Files, tally: &mut Tally) -> SkillResources {
    let listing = match files.listing(skill.place(), &skill.dir) {
        Ok(listing) => listing,
        Err(err) => {
            tracing::debug!(skill = %skill.name, "files listed as dynamic: {err}");
            return SkillResources::Dynamic;
        }
    };
    if let Some(limit) = listing.truncated {
        tracing::debug!(skill = %skill.name, "files listed as dynamic: the listing stopped ({limit:?})");
        return SkillResources::Dynamic;
    }
    let own = listing
        .files
        .iter()
        .filter(|entry| in_uri(skill, &entry.path) == uri::SKILL_MD)
        .count();
    if own != 1 {
        tracing::debug!(skill = %skill.name, "files listed as dynamic: the skill's own file is listed {own} times");
        return SkillResources::Dynamic;
    }
    let hashed = match files.digests(skill.place(), &skill.dir, &listing) {
        Ok(hashed) => hashed,
        Err(err) => {
            tracing::debug!(skill = %skill.name, "files listed as dynamic: {err}");
            return SkillResources::Dynamic;
        }
    };
    tally.hashed += hashed.iter().filter(|h| h.fresh).count();
    tally.kept += hashed.iter().filter(|h| !h.fresh).count();
    let entries = listing.files.iter().zip(hashed);
    let resources = entries.map(|(entry, hashed)| {
        let file = uri::of(&skill.name, in_uri(skill, &entry.path));
        SkillResource::new(file, hashed.digest, hashed.size)
    });
    SkillResources::Files(resources.collect())
}
