//! Skills as MCP prompts: slash commands in clients that show prompts, and
//! completion of skill names (behaviour.md §10).
//!
//! One prompt per served skill, named like the skill, with an optional `task`;
//! then one prompt `skill` whose required `name` completes to skill names.
//! `prompts/get` answers with what a `skill` call returns, as a user message.
//!
//! The skills come first: a client that tries the first prompt (as MCP test
//! suites do, with every argument set to some text) gets a skill, not a
//! lookup of a made-up name. And the `skill` prompt answers a name that is
//! no skill with the tool's "not found" text (and its suggestions) as the
//! message, not an error: the prompt exists and its argument is a name to
//! look up, like the tool's; a person who typed it sees what they may have
//! meant.

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, Reference,
    Role,
};
use serde_json::Value;

use crate::answer::Answer;
use crate::profiles::View;
use crate::server::page::{self, Page};
use crate::server::rescan::Caller;
use crate::skill::Skill;
use crate::usage::{Recorder, Surface, Use};

/// The name of the prompt that loads any skill by name.
pub const SKILL_PROMPT: &str = "skill";

/// Completions returned at most (the MCP limit).
const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

/// `prompts/list`: one prompt per skill the client is shown (in the tool
/// description's order), then the `skill` prompt, a page at a time.
pub fn list(
    view: &View,
    request: Option<&PaginatedRequestParams>,
) -> Result<ListPromptsResult, ErrorData> {
    // The `skill` prompt is the last item; a skill named `skill` is reached
    // through it.
    let items: Vec<Option<&Skill>> = view
        .skills()
        .filter(|s| !s.name.eq_ignore_ascii_case(SKILL_PROMPT))
        .map(Some)
        .chain(std::iter::once(None))
        .collect();
    let Page { items, next_cursor } = page::page(&items, request, "prompts/list", |item| {
        item.map_or(SKILL_PROMPT, |skill| &*skill.name)
    })?;
    let prompts = items
        .iter()
        .map(|item| match item {
            None => skill_prompt(),
            Some(skill) => skill_as_prompt(skill),
        })
        .collect();
    Ok(ListPromptsResult {
        next_cursor,
        ..ListPromptsResult::with_all_items(prompts)
    })
}

fn skill_prompt() -> Prompt {
    let name = PromptArgument::new("name")
        .with_description("The skill to load, as listed (completion offers the names)")
        .with_required(true);
    let task = task_argument();
    Prompt::new(
        SKILL_PROMPT,
        Some("Load a skill by name and follow its instructions"),
        Some(vec![name, task]),
    )
}

fn skill_as_prompt(skill: &Skill) -> Prompt {
    let description = skill.description();
    Prompt::new(
        &*skill.name,
        Some(description).filter(|d| !d.is_empty()),
        Some(vec![task_argument()]),
    )
}

fn task_argument() -> PromptArgument {
    PromptArgument::new("task")
        .with_description("What to do with the skill (optional)")
        .with_required(false)
}

/// `prompts/get`: the skill's answer as one user message, with the task as
/// its last paragraph when one is given. An unknown prompt, or a skill that
/// cannot be loaded, is an error carrying the `skill` tool's text; but the
/// `skill` prompt answers a `name` that loads no skill with that text as the
/// message (see the module's comment), unless the name is too long to look
/// up or names a quarantined skill (refused everywhere).
pub async fn get(
    caller: &Caller,
    usage: &Recorder,
    client: Option<&str>,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let argument = |name: &str| -> Result<Option<&str>, ErrorData> {
        match request.arguments.as_ref().and_then(|a| a.get(name)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.as_str())),
            Some(_) => Err(ErrorData::invalid_params(
                format!("prompt argument `{name}` must be a string"),
                None,
            )),
        }
    };
    let by_name = request.name == SKILL_PROMPT;
    let name = if by_name {
        match argument("name")? {
            Some(name) if !name.trim().is_empty() => name.to_owned(),
            _ => {
                return Err(ErrorData::invalid_params(
                    "the `skill` prompt needs the argument `name`: the skill to load",
                    None,
                ));
            }
        }
    } else {
        request.name.clone()
    };
    let answer = caller.call(client, &name).await;
    let (text, skill) = match answer {
        Answer::Skill { text, skill, .. } => (text, skill),
        // Refused outright: a name too long to look up, and a quarantined
        // skill (refused on every surface, as its own prompt would be).
        Answer::Invalid(text) | Answer::Withheld(text) => {
            return Err(ErrorData::invalid_params(text, None));
        }
        other if by_name => {
            return Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                other.into_text(),
            )]));
        }
        other => return Err(ErrorData::invalid_params(other.into_text(), None)),
    };
    let text = match argument("task")?.map(str::trim).filter(|t| !t.is_empty()) {
        Some(task) => format!("{text}\n\nTask: {task}"),
        None => text,
    };
    usage.record(&skill, client, Use::Load(Surface::Prompt));
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        text,
    )]))
}

/// `completion/complete` for the `skill` prompt's `name`: skill names that
/// start with what was typed (full or short name), then what the search of a miss finds,
/// at most 100, with the total.
pub fn complete(view: &View, request: &CompleteRequestParams) -> CompleteResult {
    let wanted = matches!(&request.r#ref, Reference::Prompt(prompt)
        if prompt.name == SKILL_PROMPT && request.argument.name == "name");
    if !wanted {
        return CompleteResult::default();
    }
    let names = matching_names(view, &request.argument.value);
    completion(names)
}

/// Names of shown skills matching `typed`: prefix matches first (in listing
/// order), then fuzzy ones (best first).
pub fn matching_names<'a>(view: &'a View, typed: &str) -> Vec<&'a str> {
    let typed = typed.trim().to_lowercase();
    let mut names: Vec<&str> = view
        .skills()
        .filter(|s| {
            s.name.to_lowercase().starts_with(&typed)
                || s.short_name().to_lowercase().starts_with(&typed)
        })
        .map(|s| &*s.name)
        .collect();
    if !typed.is_empty() {
        let fuzzy = view.search(&typed, MAX_COMPLETIONS);
        for skill in fuzzy {
            if !names.contains(&&*skill.name) {
                names.push(&skill.name);
            }
        }
    }
    names
}

/// A completion of at most 100 of `values`, saying how many there are.
pub fn completion(values: Vec<&str>) -> CompleteResult {
    let total = values.len();
    let shown: Vec<String> = values
        .into_iter()
        .take(MAX_COMPLETIONS)
        .map(str::to_owned)
        .collect();
    let info = CompletionInfo::with_pagination(
        shown,
        Some(u32::try_from(total).unwrap_or(u32::MAX)),
        total > MAX_COMPLETIONS,
    )
    .expect("at most MAX_VALUES values");
    CompleteResult::new(info)
}
