//! Skills from MCP servers: every tool of the stdio servers in an `mcpServers`
//! settings file becomes a skill.
//!
//! [`settings`] reads the file, [`generate`] turns a tool into a name and a
//! `SKILL.md`, and [`lock`] records what was written from which tool list.

pub mod generate;
pub mod lock;
pub mod settings;
