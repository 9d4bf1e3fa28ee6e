//! Skill files as MCP resources (behaviour.md §11): `resources/list` (one
//! `SKILL.md` per served skill), the two templates, `resources/read` of any
//! file of any served skill, `resources/directory/read`, and completion of
//! the templates' arguments.
//!
//! A URI is looked up in the current snapshot ([`uri::locate`]) and the path
//! in it resolved by the rules of the `skill` tool's `file` argument
//! ([`answer::target`]): what the tool would refuse, a resource refuses too.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64_STANDARD;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, DIRECTORY_MIME_TYPE, ErrorCode,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourceTemplate,
};

use crate::answer;
use crate::files::Files;
use crate::gate::{FileError, Kind, Target};
use crate::mime::{self, Raw};
use crate::profiles::View;
use crate::render;
use crate::server::page::{self, Page};
use crate::server::prompts;
use crate::skill::Skill;
use crate::uri::{self, SKILL_MD};

/// The template of every skill's `SKILL.md`.
pub const SKILL_MD_TEMPLATE: &str = "skill://{name}/SKILL.md";
/// The template of any file in a skill.
pub const FILE_TEMPLATE: &str = "skill://{name}/{+path}";

/// `resources/list`: the `SKILL.md` of every skill the client is shown, in
/// the tool description's order, a page at a time.
pub fn list(
    view: &View,
    request: Option<&PaginatedRequestParams>,
) -> Result<ListResourcesResult, ErrorData> {
    let Page { items, next_cursor } =
        page::page(view.visible(), request, "resources/list", |&c| {
            &*view.skill(c).name
        })?;
    let resources = items
        .iter()
        .map(|&c| {
            let skill = view.skill(c);
            let resource = Resource::new(uri::skill_md(&skill.name), &*skill.name)
                .with_mime_type("text/markdown");
            let description = skill.description();
            if description.is_empty() {
                resource
            } else {
                resource.with_description(description)
            }
        })
        .collect();
    Ok(ListResourcesResult {
        next_cursor,
        ..ListResourcesResult::with_all_items(resources)
    })
}

/// `resources/templates/list`: the two templates, on one page.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(SKILL_MD_TEMPLATE, "skill")
            .with_title("A skill's SKILL.md")
            .with_description(
                "The instructions of the skill `name` (a plugin skill `plugin:skill` is `plugin/skill`).",
            )
            .with_mime_type("text/markdown"),
        ResourceTemplate::new(FILE_TEMPLATE, "skill-file").with_title("A file of a skill").with_description(
            "Any file in the skill `name`'s folder, `path` relative to it (e.g. `references/forms.md`).",
        ),
    ])
}

/// Why `resources/read` answers no contents.
pub struct Unread {
    pub error: ErrorData,
    /// The skill folder to scan again before reading once more: the file
    /// is not what the skill's security scan read.
    pub rescreen: Option<Arc<Path>>,
}

impl From<ErrorData> for Unread {
    fn from(error: ErrorData) -> Unread {
        Unread {
            error,
            rescreen: None,
        }
    }
}

/// `resources/read`: the file's bytes, as `text` when they are text and as a
/// base64 `blob` otherwise, with the MIME type by extension; and the skill
/// and the file's path in its folder (for the usage record). The bytes of a
/// skill that is not the user's own are served only when they are those
/// its security scan read.
pub fn read<'v>(
    view: &'v View,
    files: &Files,
    uri: &str,
) -> Result<(ReadResourceResult, &'v Skill, String), Unread> {
    let (skill, target) = find(view, uri)?;
    if target.kind() == Kind::Folder {
        return Err(not_found(
            uri,
            "it is a folder; list it with resources/directory/read, or read the files in it",
        )
        .into());
    }
    let rel = target.rel().to_owned();
    let bytes = files
        .bytes(target)
        .map_err(|error| file_error(uri, skill, error))?;
    if let Some(seen) = view.snapshot().seen(skill)
        && !seen.admits(&rel, &bytes)
    {
        return Err(Unread {
            error: ErrorData::internal_error(render::unscanned(&skill.name, &rel), None),
            rescreen: Some(Arc::clone(&skill.dir)),
        });
    }
    let contents = match mime::raw(&rel, bytes) {
        (Raw::Text(text), mime) => ResourceContents::text(text, uri).with_mime_type(mime),
        (Raw::Blob(bytes), mime) => {
            ResourceContents::blob(BASE64_STANDARD.encode(bytes), uri).with_mime_type(mime)
        }
    };
    Ok((ReadResourceResult::new(vec![contents]), skill, rel))
}

/// `resources/directory/read`: the files and folders directly inside a folder
/// of a skill (`skill://pdf` is the skill's folder), as far as the listing of
/// the skill's files reaches; folders have the type `inode/directory`.
/// Anything but a folder is invalid params.
pub fn read_directory(
    view: &View,
    files: &Files,
    uri: &str,
    request: &PaginatedRequestParams,
) -> Result<ListResourcesResult, ErrorData> {
    // Invalid params, not -32002: the skills extension's rule for a URI that
    // is not a folder.
    let (skill, target) = find(view, uri).map_err(|error| ErrorData {
        code: ErrorCode::INVALID_PARAMS,
        ..error
    })?;
    if target.kind() != Kind::Folder {
        return Err(ErrorData::invalid_params(
            format!("{uri} is a file, not a folder; read it with resources/read"),
            None,
        ));
    }
    let rel = target.rel().to_owned();
    drop(target);
    let listing = files
        .folder_listing(skill.place(), &skill.dir, &rel)
        .map_err(|error| ErrorData {
            code: ErrorCode::INVALID_PARAMS,
            ..file_error(uri, skill, error)
        })?;
    let prefix = match rel.as_str() {
        "" => String::new(),
        rel => format!("{rel}/"),
    };
    let mut children: Vec<Resource> = Vec::new();
    let mut last_folder = "";
    for entry in &listing.files {
        let Some(below) = entry.path.strip_prefix(&prefix) else {
            continue;
        };
        match below.split_once('/') {
            None => {
                let path = in_uri(skill, &entry.path);
                let mut child = Resource::new(uri::of(&skill.name, path), file_name(path))
                    .with_size(entry.size);
                child.mime_type = mime::mime(path).map(str::to_owned);
                children.push(child);
            }
            Some((folder, _)) if folder != last_folder => {
                last_folder = folder;
                let path = format!("{prefix}{folder}");
                children.push(
                    Resource::new(uri::of(&skill.name, &path), folder)
                        .with_mime_type(DIRECTORY_MIME_TYPE),
                );
            }
            Some(_) => {}
        }
    }
    let list = format!("resources/directory/read {uri}");
    let Page { items, next_cursor } =
        page::page(&children, Some(request), &list, |child| child.uri.as_str())?;
    Ok(ListResourcesResult {
        next_cursor,
        ..ListResourcesResult::with_all_items(items.to_vec())
    })
}

/// Completion of the templates' arguments: `name` to skill paths (a plugin
/// skill as `plugin/skill`), `path` to the files of the skill already named.
/// `None` for any other reference.
pub fn complete(
    view: &View,
    files: &Files,
    request: &CompleteRequestParams,
) -> Option<CompleteResult> {
    let Reference::Resource(reference) = &request.r#ref else {
        return None;
    };
    if ![SKILL_MD_TEMPLATE, FILE_TEMPLATE].contains(&reference.uri.as_str()) {
        return None;
    }
    let typed = request.argument.value.as_str();
    match &*request.argument.name {
        "name" => {
            let names = prompts::matching_names(view, &typed.replace('/', ":"));
            let paths: Vec<String> = names.iter().map(|name| name.replace(':', "/")).collect();
            Some(prompts::completion(
                paths.iter().map(String::as_str).collect(),
            ))
        }
        "path" if reference.uri == FILE_TEMPLATE => {
            let name = request
                .context
                .as_ref()
                .and_then(|context| context.arguments.as_ref())
                .and_then(|arguments| arguments.get("name"))?;
            let skill = view.by_name(&name.replace('/', ":").to_lowercase())?;
            // Listed through the gate, as a call would read them: a project
            // skill whose folder now leads out has nothing to complete.
            let Ok(listing) = files.listing(skill.place(), &skill.dir) else {
                return Some(prompts::completion(Vec::new()));
            };
            let paths = listing
                .files
                .iter()
                .map(|entry| in_uri(skill, &entry.path))
                .filter(|path| path.starts_with(typed))
                .collect();
            Some(prompts::completion(paths))
        }
        _ => None,
    }
}

/// The skill and the file or folder `uri` names, or -32002 saying why there
/// is none.
fn find<'a>(view: &'a View, uri: &str) -> Result<(&'a Skill, Target), ErrorData> {
    let Some((skill, rel)) = uri::locate(view, uri) else {
        return Err(not_found(
            uri,
            "no served skill has that address; resources/list lists every skill's SKILL.md",
        ));
    };
    let target = answer::target(skill, &on_disk(skill, &rel))
        .map_err(|error| file_error(uri, skill, error))?;
    Ok((skill, target))
}

/// The path of the file a URI's path names: `SKILL.md` is the skill's file,
/// whatever its name on disk (`skill.md`).
pub fn on_disk<'a>(skill: &'a Skill, rel: &'a str) -> Cow<'a, str> {
    let name = skill.file_name.as_str();
    if rel == SKILL_MD && name != SKILL_MD {
        Cow::Borrowed(name)
    } else {
        Cow::Borrowed(rel)
    }
}

/// The path a URI gives a listed file: the skill's file is `SKILL.md`.
pub fn in_uri<'a>(skill: &Skill, path: &'a str) -> &'a str {
    if skill.is_own_file(path) {
        SKILL_MD
    } else {
        path
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// -32002 with the URI in `data`, as the protocol's own example has it.
fn not_found(uri: &str, why: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource not found: {uri}: {why}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// A file that cannot be served: -32002 when it is not there or is refused
/// (outside the skill, hidden, not a regular file), -32603 when it is too
/// large or cannot be read.
fn file_error(uri: &str, skill: &Skill, error: FileError) -> ErrorData {
    match error {
        FileError::TooLarge { .. } | FileError::Io(_) => ErrorData::internal_error(
            format!("cannot read {uri} (skill '{}'): {error}", skill.name),
            None,
        ),
        FileError::NotFound { .. } => {
            not_found(uri, &format!("the skill '{}' has no such file", skill.name))
        }
        refused => not_found(uri, &refused.to_string()),
    }
}
