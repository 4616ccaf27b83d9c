//! The HTTP client of object stores: reqwest built as `object_store` builds it, except
//! that redirects are followed only within one origin.
//!
//! reqwest follows redirects to any host and strips only `Authorization` on the way, so a
//! server answering 301/302/307/308 with another host would receive the request's other
//! credentials (S3's `x-amz-security-token`, Azure SAS parameters) and its answer would be
//! taken as the object. Every provider (plain HTTP included) therefore follows a redirect
//! only to the same scheme, host and port, at most [`MAX_REDIRECTS`] times; a redirect to
//! another origin is not followed and its status is the error
//! ([`super::CloudStore`] words it as "redirected to another host").

use object_store::client::{HttpClient, HttpConnector};
use object_store::{ClientConfigKey, ClientOptions};
use reqwest::redirect::{Attempt, Policy};
use std::time::Duration;

/// The most redirects followed for one request.
pub(super) const MAX_REDIRECTS: usize = 10;

/// Builds the reqwest clients of one store.
#[derive(Debug)]
pub(super) struct Connector {
    /// Time allowed for one request.
    pub timeout: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
}

impl HttpConnector for Connector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        // `object_store` asks for clients of its own options (the instance-metadata one
        // allows plain HTTP): that setting is taken from them.
        let allow_http = options
            .get_config_value(&ClientConfigKey::AllowHttp)
            .as_deref()
            == Some("true");
        let client = reqwest::Client::builder()
            .user_agent(concat!("libzarr/", env!("CARGO_PKG_VERSION")))
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            // Compression would change the Content-Length that sizes are read from.
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .redirect(Policy::custom(same_origin_only))
            .https_only(!allow_http)
            .build()
            .map_err(|e| object_store::Error::Generic {
                store: "HTTP",
                source: Box::new(e),
            })?;
        Ok(HttpClient::new(client))
    }
}

/// Follows a redirect to the origin of the first request, stops at any other (the
/// redirect answer is then what the request gets).
fn same_origin_only(attempt: Attempt<'_>) -> reqwest::redirect::Action {
    let same = attempt
        .previous()
        .first()
        .is_some_and(|first| first.origin() == attempt.url().origin());
    if !same {
        attempt.stop()
    } else if attempt.previous().len() > MAX_REDIRECTS {
        attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
    } else {
        attempt.follow()
    }
}
