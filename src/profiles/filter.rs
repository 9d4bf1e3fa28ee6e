//! `include`, `exclude` and `disabled` applied to skills (behaviour.md
//! §17.2): a skill is hidden when its name is disabled, when an `exclude`
//! pattern matches it, or when `include` is not empty and none of its
//! patterns matches (exclude wins over include).

use std::path::{Path, PathBuf};

use crate::config::file::{Filters, Named};
use crate::config::pattern::{Pattern, Selector, SourceSelector};
use crate::roots::{self, Source};
use crate::skill::Skill;

/// What a filter looks at: a skill, or a skill folder that failed to load.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The full name (for a folder that failed to load, the name a call
    /// would use for it).
    pub name: &'a str,
    pub source: Source,
    pub dir: &'a Path,
    /// `name@marketplace` of the plugin it comes from.
    pub plugin: Option<&'a str>,
    /// The id of the installed source it comes from.
    pub installed: Option<&'a str>,
}

impl<'a> Subject<'a> {
    pub fn of(skill: &'a Skill) -> Subject<'a> {
        Subject {
            name: &skill.name,
            source: skill.source,
            dir: &skill.dir,
            plugin: skill.plugin().map(|p| p.key.as_str()),
            installed: skill.origin().map(|o| o.id.as_str()),
        }
    }
}

/// Which rule hides a skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule<'a> {
    Disabled(&'a Named),
    Excluded(&'a Pattern),
    /// `include` is not empty and none of its patterns matches; the first
    /// of them says where the list is.
    NotIncluded(&'a Pattern),
}

/// One level of filters (the top level's, or a profile's), ready to match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    filters: Filters,
    /// For each `dir:` pattern of `include` and `exclude` (in that order),
    /// its resolved form when it differs: a skill found through a symlinked
    /// folder matches either spelling.
    resolved: Vec<Option<PathBuf>>,
}

impl Filter {
    pub fn new(filters: &Filters) -> Filter {
        let resolved = filters
            .include
            .iter()
            .chain(&filters.exclude)
            .map(|pattern| match &pattern.selects {
                Selector::Dir(dir) => Some(roots::canonical(dir)).filter(|c| c != dir),
                _ => None,
            })
            .collect();
        Filter {
            filters: filters.clone(),
            resolved,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// The rule that hides `subject`, or `None` when it passes.
    pub fn check(&self, subject: Subject) -> Option<Rule<'_>> {
        let filters = &self.filters;
        if let Some(named) = filters
            .disabled
            .iter()
            .find(|named| same_name(subject.name, &named.name))
        {
            return Some(Rule::Disabled(named));
        }
        let includes = filters.include.len();
        if let Some((_, pattern)) = filters
            .exclude
            .iter()
            .enumerate()
            .find(|(i, pattern)| self.matches(pattern, includes + i, subject))
        {
            return Some(Rule::Excluded(pattern));
        }
        let included = filters.include.is_empty()
            || filters
                .include
                .iter()
                .enumerate()
                .any(|(i, pattern)| self.matches(pattern, i, subject));
        match filters.include.first() {
            Some(first) if !included => Some(Rule::NotIncluded(first)),
            _ => None,
        }
    }

    /// Whether `pattern` (number `at` of include then exclude) selects `subject`.
    fn matches(&self, pattern: &Pattern, at: usize, subject: Subject) -> bool {
        match &pattern.selects {
            Selector::Name(glob) => glob.matches(subject.name),
            Selector::Source(selector) => match selector {
                SourceSelector::Custom => subject.source == Source::Custom,
                SourceSelector::Project => subject.source == Source::Project,
                SourceSelector::User => subject.source == Source::User,
                SourceSelector::Plugin(key) => {
                    subject.source == Source::Plugin
                        && key.as_ref().is_none_or(|glob| {
                            subject.plugin.is_some_and(|plugin| glob.matches(plugin))
                        })
                }
                SourceSelector::Installed(id) => {
                    subject.source == Source::Installed
                        && id.as_ref().is_none_or(|glob| {
                            subject.installed.is_some_and(|source| glob.matches(source))
                        })
                }
            },
            Selector::Dir(dir) => {
                subject.dir.starts_with(dir)
                    || self.resolved[at]
                        .as_ref()
                        .is_some_and(|resolved| subject.dir.starts_with(resolved))
            }
        }
    }
}

/// Whether two names are the same, ignoring case (as calls compare them).
fn same_name(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Env;
    use crate::config::file;

    fn filter(text: &str) -> Filter {
        let env = Env {
            home: crate::config::Home::at("/home/u"),
            cwd: "/".into(),
            ..Env::default()
        };
        let parsed = file::parse(text, Path::new("/cfg/config.toml"), &env).unwrap();
        Filter::new(&parsed.filters)
    }

    fn subject<'a>(name: &'a str, source: Source, dir: &'a str) -> Subject<'a> {
        Subject {
            name,
            source,
            dir: Path::new(dir),
            plugin: None,
            installed: None,
        }
    }

    fn verdict(filter: &Filter, subject: Subject) -> Option<String> {
        filter.check(subject).map(|rule| match rule {
            Rule::Disabled(named) => format!("disabled {}", named.name),
            Rule::Excluded(pattern) => format!("excluded {}", pattern.text),
            Rule::NotIncluded(first) => format!("not included {}", first.text),
        })
    }

    #[test]
    fn exclude_wins_over_include_and_disabled_over_both() {
        let f = filter(
            "include = [\"pdf*\", \"source:custom\"]\nexclude = [\"*-old\"]\ndisabled = [\"PDF-Tools\"]\n",
        );
        let user = |name| subject(name, Source::User, "/home/u/.claude/skills/x");
        assert_eq!(verdict(&f, user("pdf")), None);
        assert_eq!(verdict(&f, user("pdf-old")), Some("excluded *-old".into()));
        assert_eq!(
            verdict(&f, user("pdf-tools")),
            Some("disabled PDF-Tools".into())
        );
        assert_eq!(verdict(&f, user("docx")), Some("not included pdf*".into()));
        assert_eq!(
            verdict(&f, subject("docx", Source::Custom, "/c/docx")),
            None
        );
        assert!(filter("").is_empty());
        assert_eq!(verdict(&filter(""), user("anything")), None);
    }

    #[test]
    fn sources_plugins_and_folders_select() {
        let f = filter(
            "exclude = [\"source:plugin:doc*@anthropic-agent-skills\", \"dir:~/.agents/skills\", \"source:installed\"]\n",
        );
        let mut plugin = subject("document-skills:pdf", Source::Plugin, "/p/pdf");
        plugin.plugin = Some("document-skills@anthropic-agent-skills");
        assert!(verdict(&f, plugin).is_some());
        plugin.plugin = Some("other@anthropic-agent-skills");
        assert_eq!(verdict(&f, plugin), None);
        assert!(
            verdict(
                &f,
                subject("bun", Source::User, "/home/u/.agents/skills/bun")
            )
            .is_some()
        );
        assert!(verdict(&f, subject("bun", Source::User, "/home/u/.agents/skills")).is_some());
        assert_eq!(
            verdict(
                &f,
                subject("bun", Source::User, "/home/u/.agents/skills-2/bun")
            ),
            None
        );
    }
}
