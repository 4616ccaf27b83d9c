//! Settings of an object store: the options a caller passes, the provider's environment
//! variables and (for S3) the profiles of `~/.aws/credentials` and `~/.aws/config`.

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The services an object-store URL can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Amazon S3 and S3-compatible servers (`s3://bucket/prefix`).
    S3,
    /// Google Cloud Storage (`gs://bucket/prefix`).
    Gcs,
    /// Azure Blob Storage (`az://container/prefix`, `abfs://container@account…/prefix`).
    Azure,
    /// A plain web server read with GET and range GETs (`http(s)://…`).
    Http,
}

impl Provider {
    /// The prefix of the provider's environment variables and configuration keys.
    fn key_prefix(self) -> &'static str {
        match self {
            Provider::S3 => "aws_",
            Provider::Gcs => "google_",
            Provider::Azure => "azure_",
            Provider::Http => "",
        }
    }
}

/// Everything needed to build (and, after `fork()`, rebuild) a store's client.
#[derive(Clone)]
pub struct Settings {
    /// The service.
    pub provider: Provider,
    /// The URL without its path (`s3://bucket`), given to the provider's builder.
    pub base_url: String,
    /// Provider configuration keys (`aws_region`, `azure_storage_account_key`, ...) and
    /// values: profile, then environment, then options, the later overriding.
    pub config: BTreeMap<String, String>,
    /// Time allowed for one HTTP request (connect, send, answer and body).
    pub timeout: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// How often a failed request is retried (5xx, throttling, dropped connections).
    pub max_retries: usize,
    /// How long retries of one request may go on.
    pub retry_timeout: Duration,
    /// Whether plain `http://` endpoints are allowed.
    pub allow_http: bool,
    /// The most requests of one store in flight at once.
    pub max_requests: usize,
    /// Values at least this long are written with a multipart upload.
    pub multipart_threshold: usize,
    /// Size of each part of a multipart upload.
    pub part_size: usize,
    /// The most keys one listing may hold (option `max_list_keys`): more is an error.
    pub max_list_keys: usize,
    /// Values that must never appear in a message (keys, secrets, tokens).
    pub secrets: Vec<String>,
    /// The Zarr format the caller says the store holds (option `zarr_format`): its
    /// documents are looked for first ([`crate::store::Store::zarr_format_hint`]).
    pub zarr_format: Option<u8>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Configuration values may be secrets: only their names are shown.
        f.debug_struct("Settings")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("config_keys", &self.config.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The configuration keys of the endpoints that data is read from and written to.
const DATA_ENDPOINTS: [&str; 4] = [
    "aws_endpoint",
    "aws_endpoint_url_s3",
    "azure_storage_endpoint",
    "google_base_url",
];

/// Configuration keys holding a URL that requests are sent to.
const URL_KEYS: [&str; 10] = [
    "aws_endpoint",
    "aws_endpoint_url_s3",
    "aws_endpoint_url_sts",
    "aws_metadata_endpoint",
    "aws_container_credentials_full_uri",
    "azure_storage_endpoint",
    "azure_msi_endpoint",
    "azure_storage_authority_host",
    "azure_fabric_token_service_url",
    "google_base_url",
];

/// Configuration keys holding a name that the client puts into a host name or a URL path.
const NAME_KEYS: [&str; 7] = [
    "aws_region",
    "aws_default_region",
    "aws_bucket",
    "azure_storage_account_name",
    "azure_container_name",
    "azure_storage_tenant_id",
    "google_bucket",
];

/// Configuration keys whose value the client sends in a request header.
const HEADER_KEYS: [&str; 7] = [
    "aws_access_key_id",
    "aws_session_token",
    "azure_storage_token",
    "azure_fabric_session_token",
    "azure_fabric_cluster_identifier",
    "azure_fabric_workload_host",
    "google_bearer_token",
];

/// Configuration keys whose value is a document that may hold line breaks (a service
/// account's JSON key).
const KEY_DOCUMENTS: [&str; 1] = ["google_service_account_key"];

/// Smallest part S3 accepts in a multipart upload (except the last).
const MIN_PART: usize = 5 << 20;

impl Settings {
    /// The settings for `provider` at `base_url` from the environment, the AWS profile files
    /// and `options` (a JSON object, or `None`).
    pub fn new(
        provider: Provider,
        base_url: &str,
        options: Option<&Map<String, Value>>,
    ) -> Result<Self> {
        let mut settings = Settings {
            provider,
            base_url: base_url.to_string(),
            config: BTreeMap::new(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            max_retries: 3,
            retry_timeout: Duration::from_secs(60),
            allow_http: provider == Provider::Http,
            max_requests: 64,
            multipart_threshold: 64 << 20,
            part_size: 16 << 20,
            max_list_keys: 10_000_000,
            secrets: Vec::new(),
            zarr_format: None,
        };
        let empty = Map::new();
        let options = options.unwrap_or(&empty);
        let explicit_profile = options
            .get("profile")
            .map(|v| text(v, "profile"))
            .transpose()?;
        if provider == Provider::S3 && explicit_profile.is_none() {
            let env_profile = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty());
            settings.config.extend(aws_profile(env_profile.as_deref())?);
        }
        settings.config.extend(environment(provider));
        if let Some(profile) = &explicit_profile {
            settings.config.extend(aws_profile(Some(profile))?);
        }
        for (name, value) in options {
            settings.apply(name, value)?;
        }
        if settings.part_size < MIN_PART {
            return Err(Error::InvalidArg(format!(
                "option part_size ({}) is below {MIN_PART} bytes, the smallest part S3 accepts",
                settings.part_size
            )));
        }
        let endpoint_is_http = DATA_ENDPOINTS
            .iter()
            .filter_map(|k| settings.config.get(*k))
            .any(|e| e.starts_with("http://"));
        if endpoint_is_http && !options.contains_key("allow_http") {
            // An endpoint written with http:// says plainly what the caller wants.
            settings.allow_http = true;
        }
        settings.check_sent_values()?;
        settings.secrets = settings
            .config
            .iter()
            .filter(|(k, v)| is_secret_name(k) && v.len() >= 4)
            .map(|(_, v)| v.clone())
            .collect();
        // The password and query values of the URL (a web server's basic authentication,
        // a signed URL): URLs in messages lose them anyway, but a server may echo them.
        if let Ok(url) = ::url::Url::parse(base_url) {
            let password = url.password().map(super::percent_decode);
            let values = url.query_pairs().map(|(_, v)| v.into_owned());
            settings
                .secrets
                .extend(password.into_iter().chain(values).filter(|v| v.len() >= 4));
        }
        Ok(settings)
    }

    /// Refuses the values, wherever they came from (options, environment, profile), that
    /// cannot go into a request: a control character anywhere (but in a key document); an
    /// endpoint that is not an http(s) URL with a host; a region, bucket or account name
    /// that is not a plain name (it becomes part of a host name); a non-ASCII character in
    /// a value sent in a header. The client would fail on them only at the first request,
    /// some by panicking, and a name holding `@` or `/` would send the request, signed, to
    /// another host. Messages name the key, never its value.
    fn check_sent_values(&self) -> Result<()> {
        let refused = |key: &str, what: &str| {
            Err(Error::InvalidArg(format!(
                "{key} {what}: the value cannot go into a request"
            )))
        };
        for (key, value) in &self.config {
            let control = value.chars().any(char::is_control);
            if control && !KEY_DOCUMENTS.contains(&key.as_str()) {
                return refused(key, "holds a control character");
            }
        }
        for key in URL_KEYS {
            let Some(value) = self.config.get(key) else {
                continue;
            };
            // (The URL parser drops and encodes white space that the client then sends
            // as it is.)
            let is_url = !value.contains(char::is_whitespace)
                && ::url::Url::parse(value)
                    .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host());
            if !is_url {
                return refused(key, "is not an http:// or https:// URL with a host");
            }
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        for key in NAME_KEYS {
            if self.config.get(key).is_some_and(|v| !v.chars().all(plain)) {
                return refused(
                    key,
                    "holds other characters than letters, digits, '.', '-', '_'",
                );
            }
        }
        for key in HEADER_KEYS {
            if self.config.get(key).is_some_and(|v| !v.is_ascii()) {
                return refused(key, "holds a non-ASCII character (it is sent in a header)");
            }
        }
        Ok(())
    }

    /// Applies one option of the caller's JSON.
    fn apply(&mut self, name: &str, value: &Value) -> Result<()> {
        let prefix = self.provider.key_prefix();
        let provider_key = |generic: &str| -> Result<String> {
            match (self.provider, generic) {
                (Provider::S3, "endpoint") => Ok("aws_endpoint".into()),
                (Provider::S3, "region") => Ok("aws_region".into()),
                (Provider::S3, "access_key_id") => Ok("aws_access_key_id".into()),
                (Provider::S3, "secret_access_key") => Ok("aws_secret_access_key".into()),
                (Provider::S3, "session_token") => Ok("aws_session_token".into()),
                (Provider::S3, "anonymous") => Ok("aws_skip_signature".into()),
                (Provider::Gcs, "endpoint") => Ok("google_base_url".into()),
                (Provider::Gcs, "anonymous") => Err(Error::Unsupported(
                    "anonymous access to gs:// buckets is not available: the object_store \
                     crate (0.14) ignores it for Google Cloud Storage"
                        .into(),
                )),
                (Provider::Azure, "endpoint") => Ok("azure_storage_endpoint".into()),
                (Provider::Azure, "anonymous") => Ok("azure_skip_signature".into()),
                _ => Err(Error::InvalidArg(format!(
                    "option {generic:?} does not apply to {} stores",
                    self.base_url.split(':').next().unwrap_or("these")
                ))),
            }
        };
        match name {
            "profile" => {}
            "timeout_ms" => self.timeout = Duration::from_millis(number(value, name)?),
            "connect_timeout_ms" => {
                self.connect_timeout = Duration::from_millis(number(value, name)?)
            }
            "retry_timeout_ms" => self.retry_timeout = Duration::from_millis(number(value, name)?),
            "max_retries" => self.max_retries = number(value, name)? as usize,
            "max_requests" => {
                let n = number(value, name)? as usize;
                if n == 0 {
                    return Err(Error::InvalidArg(
                        "option max_requests must be at least 1".into(),
                    ));
                }
                self.max_requests = n
            }
            "multipart_threshold" => self.multipart_threshold = number(value, name)? as usize,
            "max_list_keys" => {
                self.max_list_keys = usize::try_from(number(value, name)?).unwrap_or(usize::MAX)
            }
            "part_size" => self.part_size = number(value, name)? as usize,
            "allow_http" => self.allow_http = flag(value, name)?,
            "zarr_format" => match number(value, name) {
                Ok(n @ 1..=3) => self.zarr_format = Some(n as u8),
                _ => {
                    return Err(Error::InvalidArg(
                        "option zarr_format must be 1, 2 or 3".into(),
                    ))
                }
            },
            "endpoint" | "region" | "access_key_id" | "secret_access_key" | "session_token"
            | "anonymous" => {
                let key = provider_key(name)?;
                let value = if name == "anonymous" {
                    flag(value, name)?.to_string()
                } else {
                    text(value, name)?
                };
                self.config.insert(key, value);
            }
            other if !prefix.is_empty() && other.starts_with(prefix) => {
                let key = canonical_key(self.provider, other).ok_or_else(|| {
                    Error::InvalidArg(format!("unknown option {other:?} for this store"))
                })?;
                self.config.insert(key, scalar(value, other)?);
            }
            other => {
                return Err(Error::InvalidArg(format!(
                    "unknown option {other:?} (known: endpoint, region, access_key_id, \
                 secret_access_key, session_token, profile, anonymous, allow_http, timeout_ms, \
                 connect_timeout_ms, max_retries, retry_timeout_ms, max_requests, \
                 multipart_threshold, part_size, max_list_keys, zarr_format{})",
                    if prefix.is_empty() {
                        String::new()
                    } else {
                        format!(", and the {prefix}* keys of the object_store crate")
                    }
                )))
            }
        }
        Ok(())
    }

    /// `message` with every secret value of these settings, the user information and
    /// query values of URLs and all but the code and message of error bodies masked.
    pub fn redact(&self, message: &str) -> String {
        super::redact::redact(message, &self.secrets)
    }
}

/// Whether a configuration key holds a secret (or something close enough to hide).
fn is_secret_name(key: &str) -> bool {
    ["secret", "token", "key", "sas", "password", "credential"]
        .iter()
        .any(|s| key.contains(s))
}

fn number(value: &Value, name: &str) -> Result<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| Error::InvalidArg(format!("option {name} must be a non-negative integer")))
}

fn flag(value: &Value, name: &str) -> Result<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" || s == "false" => Ok(s == "true"),
        _ => Err(Error::InvalidArg(format!(
            "option {name} must be true or false"
        ))),
    }
}

fn text(value: &Value, name: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        _ => Err(Error::InvalidArg(format!("option {name} must be a string"))),
    }
}

fn scalar(value: &Value, name: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(Error::InvalidArg(format!(
            "option {name} must be a string, number or boolean"
        ))),
    }
}

/// The provider's environment variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`) as configuration
/// keys (lower case); the builder later refuses names it does not know, so only names it
/// knows are taken here.
fn environment(provider: Provider) -> BTreeMap<String, String> {
    let prefix = provider.key_prefix();
    if prefix.is_empty() {
        return BTreeMap::new();
    }
    std::env::vars()
        .filter_map(|(name, value)| {
            let lower = name.to_ascii_lowercase();
            if !lower.starts_with(prefix) {
                return None;
            }
            canonical_key(provider, &lower).map(|key| (key, value))
        })
        .collect()
}

/// The canonical name of configuration key `key` (`aws_endpoint_url` → `aws_endpoint`)
/// when the `object_store` builder of `provider` knows it.
pub fn canonical_key(provider: Provider, key: &str) -> Option<String> {
    use object_store::{aws::AmazonS3ConfigKey, azure::AzureConfigKey, gcp::GoogleConfigKey};
    match provider {
        Provider::S3 => key
            .parse::<AmazonS3ConfigKey>()
            .ok()
            .map(|k| k.as_ref().to_string()),
        Provider::Gcs => key
            .parse::<GoogleConfigKey>()
            .ok()
            .map(|k| k.as_ref().to_string()),
        Provider::Azure => key
            .parse::<AzureConfigKey>()
            .ok()
            .map(|k| k.as_ref().to_string()),
        Provider::Http => None,
    }
}

/// The sections of an INI file (as AWS writes them): section name → key → value. Comments
/// start with `#` or `;`; keys and names are trimmed; indented lines (nested settings such
/// as `s3 =` blocks) are skipped.
pub fn parse_ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            sections.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(section), Some((key, value))) = (&current, line.split_once('=')) {
            if let Some(entries) = sections.get_mut(section) {
                entries.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
            }
        }
    }
    sections
}

fn aws_file(variable: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(Path::new(&home).join(".aws").join(name))
}

/// The settings of AWS profile `name` (or `default` when `None`) from the shared
/// credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) and the
/// config file (`AWS_CONFIG_FILE`, else `~/.aws/config`), as configuration keys. A profile
/// named explicitly must exist in one of them; the default profile may be missing.
pub fn aws_profile(name: Option<&str>) -> Result<BTreeMap<String, String>> {
    let profile = name.unwrap_or("default");
    let mut found = false;
    let mut out = BTreeMap::new();
    let read =
        |path: &Option<PathBuf>| -> Result<Option<BTreeMap<String, BTreeMap<String, String>>>> {
            let Some(path) = path else { return Ok(None) };
            match std::fs::read_to_string(path) {
                Ok(text) => Ok(Some(parse_ini(&text))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
            }
        };
    let config_path = aws_file("AWS_CONFIG_FILE", "config");
    let credentials_path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    // The config file names profiles `[profile NAME]` (and `[default]`).
    if let Some(sections) = read(&config_path)? {
        let section = sections.get(&format!("profile {profile}")).or_else(|| {
            (profile == "default")
                .then(|| sections.get("default"))
                .flatten()
        });
        if let Some(entries) = section {
            found = true;
            for (from, to) in [
                ("region", "aws_region"),
                ("endpoint_url", "aws_endpoint"),
                ("aws_access_key_id", "aws_access_key_id"),
                ("aws_secret_access_key", "aws_secret_access_key"),
                ("aws_session_token", "aws_session_token"),
            ] {
                if let Some(value) = entries.get(from) {
                    out.insert(to.to_string(), value.clone());
                }
            }
        }
    }
    // The credentials file names them `[NAME]` and wins over the config file.
    if let Some(sections) = read(&credentials_path)? {
        if let Some(entries) = sections.get(profile) {
            found = true;
            for key in [
                "aws_access_key_id",
                "aws_secret_access_key",
                "aws_session_token",
            ] {
                if let Some(value) = entries.get(key) {
                    out.insert(key.to_string(), value.clone());
                }
            }
        }
    }
    if !found && name.is_some() {
        return Err(Error::InvalidArg(format!(
            "AWS profile {profile:?} is in neither {} nor {}",
            credentials_path.map_or("~/.aws/credentials".into(), |p| p.display().to_string()),
            config_path.map_or("~/.aws/config".into(), |p| p.display().to_string()),
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_keys_and_comments() {
        let ini = "# comment\n[default]\naws_access_key_id = AK\n; other\n\
                   [profile dev]\nregion=eu-west-1\ns3 =\n  endpoint_url = nested\n\
                   endpoint_url = http://localhost:9000\n";
        let sections = parse_ini(ini);
        assert_eq!(sections["default"]["aws_access_key_id"], "AK");
        assert_eq!(sections["profile dev"]["region"], "eu-west-1");
        assert_eq!(
            sections["profile dev"]["endpoint_url"],
            "http://localhost:9000"
        );
    }
}
