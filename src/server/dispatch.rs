//! skillserve as rmcp's [`Service`]: every message goes through rmcp's own
//! dispatch to [`SkillServer`], except a `skills/list` page where that
//! dispatch has nothing to check but the page.
//!
//! rmcp checks every page a handler returns against the skills extension
//! (`validate_skills`: each name in NFKC, each file's URI normalized and
//! placed under its skill, each digest). At 100,000 skills that was a fifth
//! of the server's time in a full walk, spent on the one thread that
//! answers while the client waits. The entries are valid by construction
//! ([`super::skills`]: names the extension accepts, URIs made by
//! [`crate::uri::of`] under the skill's own, digests as `sha256:` and hex),
//! and a debug build, which every test runs, checks each page as rmcp does.
//!
//! The page is answered here only when rmcp's dispatch would check nothing
//! else (what its `handle_request` does before it calls the handler): the
//! session was opened with `initialize` and does not require per-request
//! metadata, the request names no protocol version or client of its own in
//! `_meta`, and the server declares the skills extension and resources.
//! Anything else — the 2026-07-28 lifecycle, a request with its own
//! version — goes through rmcp, checks included, and so does `serve
//! --http`, whose rmcp service takes the handler itself.

use std::borrow::Cow;

use rmcp::model::{
    ClientNotification, ClientRequest, ListSkillsRequest, ProtocolVersion, ServerConfig,
    ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, Service};

use crate::server::handler::SkillServer;

/// [`SkillServer`] behind rmcp's dispatch, with `skills/list` pages
/// answered directly where that dispatch would only check the page.
pub struct Dispatch(pub SkillServer);

impl Service<RoleServer> for Dispatch {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        match request {
            ClientRequest::ListSkillsRequest(list) if self.checks_only_the_page(&context) => {
                self.list_skills(list, context).await
            }
            request => Service::handle_request(&self.0, request, context).await,
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Service::handle_notification(&self.0, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}

impl Dispatch {
    /// Whether rmcp would check nothing but the page of this `skills/list`.
    fn checks_only_the_page(&self, context: &RequestContext<RoleServer>) -> bool {
        let capabilities = ServerHandler::get_info(&self.0).capabilities;
        capabilities.supports_skills()
            && capabilities.resources.is_some()
            && context.meta.protocol_version().is_none()
            && context.meta.client_info().is_none()
            && context.peer.peer_info().is_some()
            // With no client in `_meta`, rmcp answers the `initialize`
            // client here only in a session that does not require
            // per-request metadata (one opened inline does).
            && context.client_info().is_some()
    }

    async fn list_skills(
        &self,
        list: ListSkillsRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let legacy = context
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28);
        let page = ServerHandler::list_skills(&self.0, list.params, context).await?;
        debug_assert_eq!(rmcp::model::validate_skills(&page.skills), Ok(()));
        let mut result = ServerResult::ListSkillsResult(page);
        // As rmcp's dispatch does: peers before 2026-07-28 get the shape
        // they knew, without `resultType` (the same answer as over HTTP).
        if legacy {
            result.strip_result_type_for_legacy_peer();
        }
        Ok(result)
    }
}
