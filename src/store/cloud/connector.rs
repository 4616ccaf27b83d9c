//! The HTTP client of object stores: reqwest built as `object_store` builds it, except
//! that redirects are followed only within one origin and that answers `object_store`
//! reads whole are bounded ([`Bounded`]).
//!
//! reqwest follows redirects to any host and strips only `Authorization` on the way, so a
//! server answering 301/302/307/308 with another host would receive the request's other
//! credentials (S3's `x-amz-security-token`, Azure SAS parameters) and its answer would be
//! taken as the object. Every provider (plain HTTP included) therefore follows a redirect
//! only to the same scheme, host and port, at most [`MAX_REDIRECTS`] times; a redirect to
//! another origin is not followed and its status is the error
//! ([`super::CloudStore`] words it as "redirected to another host").

use futures_util::StreamExt;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
};
use object_store::{ClientConfigKey, ClientOptions};
use reqwest::redirect::{Attempt, Policy};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The most bytes of one listing answer (a page of S3, GCS or Azure, a web server's
/// PROPFIND) or of any other answer that is not an object's content: more is an error.
/// The largest pages of the services hold a few mebibytes (1000 keys of up to 1 KiB on S3,
/// 5000 entries on Azure); a web server's PROPFIND of some 30000 entries fits.
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// The most bytes kept of an error answer's body (the rest is dropped unread).
const MAX_ERROR_BYTES: usize = 64 << 10;

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

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
        Ok(HttpClient::new(Bounded(client)))
    }
}

/// A reqwest client whose answers other than objects' content are bounded: `object_store`
/// reads listings, error bodies and the answers of writes whole, so a hostile server could
/// otherwise make it hold any amount. An error body is cut to [`MAX_ERROR_BYTES`] (it is
/// only quoted, in part, by a message); any other answer but a GET of an object longer
/// than [`MAX_ANSWER_BYTES`] is an error. Objects' content is passed on as a stream, read
/// within the bounds of the caller ([`super::reads`]).
#[derive(Debug)]
struct Bounded(reqwest::Client);

impl HttpService for Bounded {
    fn call<'a, 'b>(
        &'a self,
        req: HttpRequest,
    ) -> Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let content = req.method().as_str() == "GET" && !is_listing(&req);
        let propfind = req.method().as_str() == "PROPFIND";
        Box::pin(async move {
            let response = self.0.call(req).await?;
            let status = response.status();
            if propfind && matches!(status.as_u16(), 405 | 501) {
                // Not retried (object_store retries every 5xx): the server will not list.
                return Err(HttpError::new(
                    HttpErrorKind::Unknown,
                    NoListing(status.to_string()),
                ));
            }
            let ok = response.status().is_success();
            if ok && content {
                return Ok(response);
            }
            let (parts, body) = response.into_parts();
            let limit = if ok {
                MAX_ANSWER_BYTES
            } else {
                MAX_ERROR_BYTES
            };
            let mut kept = Vec::new();
            let mut stream = body.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                if kept.len() + chunk.len() > limit {
                    if !ok {
                        kept.extend_from_slice(&chunk[..limit - kept.len()]);
                        break;
                    }
                    return Err(HttpError::new(
                        HttpErrorKind::Decode,
                        std::io::Error::other(format!(
                            "the server's answer is longer than {limit} bytes"
                        )),
                    ));
                }
                kept.extend_from_slice(&chunk);
            }
            Ok(HttpResponse::from_parts(parts, kept.into()))
        })
    }
}

/// A web server's answer to a listing (WebDAV's PROPFIND) saying it does not list
/// directories: 405 Method Not Allowed or 501 Not Implemented, as plain file servers answer.
#[derive(Debug)]
pub(super) struct NoListing(pub String);

impl std::fmt::Display for NoListing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the web server does not list directories (it answered the listing with {})",
            self.0
        )
    }
}

impl std::error::Error for NoListing {}

/// Whether `req` asks for a listing (S3 `list-type`, Azure `comp=list`, GCS's JSON API
/// `…/o`, a web server's PROPFIND).
fn is_listing(req: &HttpRequest) -> bool {
    let query = req.uri().query().unwrap_or("");
    req.method().as_str() == "PROPFIND"
        || query.contains("list-type=")
        || query.contains("comp=list")
        || (req.uri().path().contains("/storage/v1/b/") && req.uri().path().ends_with("/o"))
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
