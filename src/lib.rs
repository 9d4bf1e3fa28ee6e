//! skillserve: a stdio MCP server that serves Agent Skills through one tool, `skill`.
//!
//! Data flows one way: [`roots`], [`installed`] and [`plugins`] → [`scan`]
//! (with [`parse`]) → [`snapshot`] → [`profiles`] (each client's view) →
//! [`answer`] → [`server`] or [`commands`]; [`config`] holds the settings
//! every step works from. [`sources`] fetches skills from git and published
//! indexes into the store that [`installed`] reads. The modules form layers
//! (`ARCHITECTURE.md`; a test holds them): each uses only lower ones.
//! Everything but [`server`] and [`import`] is blocking code without tokio,
//! rmcp or notify (but for [`uri`], which asks rmcp's model types whether a
//! name is listable); `docs/behaviour.md` is the contract.

pub mod answer;
pub mod approvals;
pub mod cli;
pub mod commands;
pub mod config;
pub mod contents;
pub mod diagnostic;
pub mod digest;
pub mod disk;
pub mod exit_codes;
pub mod files;
pub mod folders;
pub mod gate;
pub mod import;
pub mod installed;
pub mod lint;
pub mod listing;
pub mod lock;
pub mod manage;
pub mod memory;
pub mod mime;
pub mod parallel;
pub mod parse;
pub mod platform;
pub mod plugins;
pub mod profiles;
pub mod program;
pub mod render;
pub mod resolve;
pub mod roots;
pub mod scan;
pub mod search;
pub mod security;
pub mod server;
pub mod similarity;
pub mod skill;
pub mod snapshot;
pub mod sources;
pub mod spec;
pub mod text;
pub mod tokens;
pub mod trust;
pub mod uri;
pub mod usage;
