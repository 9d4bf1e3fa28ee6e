//! The limits and names the standards fix: the Agent Skills specification
//! (agentskills.io) and the MCP skills extension (SEP-2640). One place, so
//! that the spec's 64-character name is never confused with a limit of our
//! own (such as the longest query a call accepts, `config::MAX_QUERY_CHARS`).

/// Longest `name` the specification allows.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest `description` the specification allows.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest `compatibility` the specification allows.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// Body length the specification recommends staying under.
pub const RECOMMENDED_MAX_LINES: usize = 500;

/// Top-level frontmatter keys the specification defines.
pub const SPEC_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Keys Claude Code reads on top of the specification.
pub const CLAUDE_CODE_KEYS: [&str; 6] = [
    "when_to_use",
    "argument-hint",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "version",
];

/// A skill's listing stops at this many files (SEP-2640).
pub const MAX_SKILL_FILES: usize = 512;
/// A skill's listing stops at this many bytes of files in all (SEP-2640).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
