//! A client that goes away is not an error. When a 2026-07-28 client closes
//! a request's stream while its handler still runs (a `subscriptions/listen`
//! stream, each time such a client disconnects), rmcp 3.11 still tries to
//! send the handler's answer, finds the stream gone, and logs
//! `ERROR rmcp::service: failed to send pending response during drain
//! error=channel closed` — or, when the answer was already on its way (a
//! race that answering on several threads makes common), `ERROR
//! rmcp::service: fail to response message error=channel closed`. A
//! 2025-11-25 session over HTTP says the same with `error=Transport closed`
//! (its session worker's `err_closed`) when its client ends the session
//! while an answer is on its way. Nothing failed: the answer has no one
//! left to read it. [`ClientGone`] keeps those
//! two events out of the log; every other error of rmcp's is logged as
//! before.

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// The log layer that drops rmcp's error for an answer to a client that
/// has gone.
pub struct ClientGone;

impl<S: Subscriber> Layer<S> for ClientGone {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let metadata = event.metadata();
        if *metadata.level() != Level::ERROR || metadata.target() != "rmcp::service" {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        !is_client_gone(&fields.message, &fields.error)
    }
}

/// Whether rmcp's event says no more than that the client has gone.
fn is_client_gone(message: &str, error: &str) -> bool {
    matches!(
        message,
        "failed to send pending response during drain" | "fail to response message"
    ) && matches!(error, "channel closed" | "Transport closed")
}

#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_owned(),
            "error" => self.error = value.to_owned(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_send_errors_of_a_closed_channel_or_transport_are_dropped() {
        assert!(is_client_gone(
            "failed to send pending response during drain",
            "channel closed"
        ));
        assert!(is_client_gone("fail to response message", "channel closed"));
        assert!(is_client_gone(
            "fail to response message",
            "Transport closed"
        ));
        assert!(is_client_gone(
            "failed to send pending response during drain",
            "Transport closed"
        ));
        assert!(!is_client_gone("fail to response message", "broken pipe"));
        assert!(!is_client_gone(
            "failed to send pending response during drain",
            "broken pipe"
        ));
        assert!(!is_client_gone("fail to close sink", "channel closed"));
        assert!(!is_client_gone("fail to close sink", "Transport closed"));
    }
}
