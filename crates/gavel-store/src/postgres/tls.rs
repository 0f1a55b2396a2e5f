//! TLS to PostgreSQL, as libpq's `sslmode` says: a team's database is usually across a network.
//!
//! The `postgres` crate knows `sslmode=disable|prefer|require` and nothing of certificates, so
//! gavel takes libpq's TLS parameters out of the URL itself ([`split`]) and builds a rustls
//! connector from them ([`Tls::connector`]). The meanings are libpq's:
//!
//! | `sslmode` | TLS | server certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `allow`, `prefer` (default) | when the server offers it | checked against `sslrootcert` if one is given, else not |
//! | `require` | always | the same |
//! | `verify-ca` | always | signed by a root of `sslrootcert` |
//! | `verify-full` | always | signed by a root of `sslrootcert`, and naming the host |
//!
//! `sslrootcert` is a PEM file, or `system` for the system's roots (which, as in libpq, asks
//! for `verify-full`). `sslcert` and `sslkey` give a client certificate. The environment
//! variables `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT` and `PGSSLKEY` apply when the URL does
//! not say ([`PgEnv`]). A unix socket never uses TLS (libpq ignores `sslmode` there too).
//! Errors never repeat an invalid `sslmode`, nor a file path holding `=`: a value that ran
//! into the parameters after it would print them, a password with them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use postgres::config::{Host, SslMode};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The libpq environment variables gavel honours when the URL does not say.
#[derive(Debug, Clone, Default)]
pub struct PgEnv {
    /// `PGPASSWORD`: the password when the URL has none.
    pub password: Option<String>,
    /// `PGSSLMODE`.
    pub sslmode: Option<String>,
    /// `PGSSLROOTCERT`.
    pub sslrootcert: Option<String>,
    /// `PGSSLCERT`.
    pub sslcert: Option<String>,
    /// `PGSSLKEY`.
    pub sslkey: Option<String>,
    /// libpq's default roots, `~/.postgresql/root.crt`, when that file exists: used when
    /// neither the URL nor `PGSSLROOTCERT` names roots (then `prefer` and `require` check the
    /// server's chain, as with libpq).
    pub default_rootcert: Option<String>,
}

impl PgEnv {
    /// Reads the variables from this process's environment (empty ones count as unset).
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            password: var("PGPASSWORD"),
            sslmode: var("PGSSLMODE"),
            sslrootcert: var("PGSSLROOTCERT"),
            sslcert: var("PGSSLCERT"),
            sslkey: var("PGSSLKEY"),
            default_rootcert: var("HOME")
                .map(|home| std::path::Path::new(&home).join(".postgresql/root.crt"))
                .filter(|file| file.is_file())
                .map(|file| file.display().to_string()),
        }
    }
}

/// How much of TLS a connection insists on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Where trusted roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    File(PathBuf),
    System,
}

/// The TLS a store's connections use, from the URL's libpq parameters.
#[derive(Debug, Clone)]
pub(crate) struct Tls {
    mode: Mode,
    roots: Option<Roots>,
    client: Option<(PathBuf, PathBuf)>,
}

/// The values of `sslmode`, as an error lists them.
const MODES: &str = "disable, allow, prefer, require, verify-ca, verify-full";

/// The TLS parameters gavel handles itself; the rest of the URL goes to the `postgres` crate.
const KEYS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// Takes libpq's TLS parameters out of `url` (either form), applying `env` where it says
/// nothing. Returns the rest of the URL and the TLS it asks for, or why it is wrong.
pub(crate) fn split(url: &str, env: &PgEnv) -> Result<(String, Tls), String> {
    // The URL form is known by its scheme, as libpq knows it (a `key=value` string may hold
    // `://` inside a value).
    let lower = url.trim_start().to_ascii_lowercase();
    let (rest, found) = if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        split_query(url)
    } else {
        split_key_values(url)
    };
    let from_url = |key: &str| {
        found
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let take = |key: &str, fallback: &Option<String>| from_url(key).or_else(|| fallback.clone());
    let mode = match take("sslmode", &env.sslmode).as_deref() {
        None => None,
        Some("disable") => Some(Mode::Disable),
        // libpq's `allow` tries without TLS first; the driver cannot, and TLS when offered is
        // the safer reading.
        Some("allow" | "prefer") => Some(Mode::Prefer),
        Some("require") => Some(Mode::Require),
        Some("verify-ca") => Some(Mode::VerifyCa),
        Some("verify-full") => Some(Mode::VerifyFull),
        // The value is not repeated: one that ran into the next parameters (a missing `&` or
        // space, an unclosed quote) would print them, a password with them.
        Some(_) => {
            let source = if from_url("sslmode").is_some() {
                "the URL's sslmode"
            } else {
                "PGSSLMODE"
            };
            return Err(format!(
                "{source} is not a valid sslmode (the value is not shown, as it may hold more of the URL); use one of {MODES}"
            ));
        }
    };
    let roots = take("sslrootcert", &env.sslrootcert)
        .or_else(|| env.default_rootcert.clone())
        .map(|r| match r.as_str() {
            "system" => Roots::System,
            path => Roots::File(PathBuf::from(path)),
        });
    let mode = match (mode, &roots) {
        (None, Some(Roots::System)) => Mode::VerifyFull,
        (Some(m), Some(Roots::System)) if m != Mode::VerifyFull && m != Mode::Disable => {
            return Err(
                "sslrootcert=system trusts every public certificate authority, so it needs sslmode=verify-full (as in libpq)"
                    .to_owned(),
            );
        }
        (m, _) => m.unwrap_or(Mode::Prefer),
    };
    if matches!(mode, Mode::VerifyCa | Mode::VerifyFull) && roots.is_none() {
        return Err(format!(
            "sslmode={} checks the server's certificate and needs the roots to trust: add sslrootcert=PATH (a PEM file) or sslrootcert=system",
            if mode == Mode::VerifyCa {
                "verify-ca"
            } else {
                "verify-full"
            }
        ));
    }
    let client = match (take("sslcert", &env.sslcert), take("sslkey", &env.sslkey)) {
        (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
        (None, None) => None,
        _ => return Err("sslcert and sslkey go together: give both, or neither".to_owned()),
    };
    Ok((
        rest,
        Tls {
            mode,
            roots,
            client,
        },
    ))
}

impl Tls {
    /// The `postgres` crate's mode for `hosts`: no TLS when every host is a unix socket.
    pub(crate) fn ssl_mode(&self, hosts: &[Host]) -> SslMode {
        let all_unix = !hosts.is_empty() && hosts.iter().all(|h| matches!(h, Host::Unix(_)));
        match self.mode {
            Mode::Disable => SslMode::Disable,
            _ if all_unix => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The rustls connector, or `None` when the connection never uses TLS. Reads the
    /// certificate files: a missing or unreadable one is an error naming it.
    pub(crate) fn connector(&self, hosts: &[Host]) -> Result<Option<MakeRustlsConnect>, String> {
        if self.ssl_mode(hosts) == SslMode::Disable {
            return Ok(None);
        }
        let provider = Arc::new(aws_lc_rs::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match &self.roots {
            None => Arc::new(Unchecked(Arc::clone(&provider))),
            Some(roots) => {
                let store = load_roots(roots)?;
                let webpki = WebPkiServerVerifier::builder_with_provider(
                    Arc::new(store),
                    Arc::clone(&provider),
                )
                .build()
                .map_err(|e| format!("the roots of sslrootcert cannot be used: {e}"))?;
                if self.mode == Mode::VerifyFull {
                    webpki
                } else {
                    Arc::new(AnyName(webpki))
                }
            }
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS cannot be set up: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match &self.client {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = read_certs(cert, "sslcert")?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    format!("{} holds no usable private key: {e}", named("sslkey", key))
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    format!("sslcert and sslkey do not make a client certificate: {e}")
                })?
            }
        };
        Ok(Some(MakeRustlsConnect::new(config)))
    }
}

/// What a TLS failure the driver reports in rustls's words means to the person reading it.
pub(crate) fn explain(why: &str) -> Option<&'static str> {
    if why.contains("UnknownIssuer") {
        Some("the server's certificate is not signed by a certificate authority of sslrootcert")
    } else if why.contains("not valid for name") {
        Some(
            "sslmode=verify-full checks the host name; connect by a name the certificate has, or use verify-ca",
        )
    } else if why.contains("server does not support TLS") {
        Some("the URL asks for TLS (sslmode); the server has it off")
    } else if why.contains("Expired") {
        Some("the server's certificate has expired")
    } else {
        None
    }
}

fn load_roots(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let (added, _) = store.add_parsable_certificates(read_certs(path, "sslrootcert")?);
            if added == 0 {
                return Err(format!(
                    "{} holds no certificate gavel can use",
                    named("sslrootcert", path)
                ));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(
                    "sslrootcert=system: this system has no trusted root certificates".to_owned(),
                );
            }
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{} cannot be read: {e}", named(what, path)))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", named(what, path)));
    }
    Ok(certs)
}

/// A file parameter for an error: `sslrootcert `/etc/ca.pem``, or the parameter alone when its
/// value holds a `=` or a control character. A path rarely does; a value that ran into the
/// parameters after it (`sslrootcert='/ca.pem password=secret`) does, and must not be printed.
fn named(what: &str, path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.contains('=') || text.chars().any(char::is_control) {
        format!("{what} (its value is not shown, as it may hold more of the URL)")
    } else {
        format!("{what} `{text}`")
    }
}

/// `sslmode=require` or `prefer` without roots: encrypted, the certificate not checked (libpq's
/// meaning). The handshake's signatures are still checked, so the peer holds the key it shows.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name it is for does not matter.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // webpki checks the name last, after the chain: a wrong name means the chain is good.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A URL's query without gavel's TLS keys, and those keys' decoded values.
fn split_query(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), Vec::new());
    };
    let mut kept = Vec::new();
    let mut found = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(k);
        if KEYS.contains(&key.as_str()) {
            found.push((key, decode(v)));
        } else {
            kept.push(pair);
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, found)
}

/// Percent-decoding of a query part (`+` stays a plus, as in libpq).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A `key=value key='v a l'` string without gavel's TLS keys, and those keys' values.
fn split_key_values(s: &str) -> (String, Vec<(String, String)>) {
    let mut kept = Vec::new();
    let mut found = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let key_end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let key = &rest[..key_end];
        let after = rest[key_end..].trim_start();
        let Some(value_part) = after.strip_prefix('=') else {
            // Not a key=value pair: leave it for the driver to refuse.
            kept.push(rest.to_owned());
            break;
        };
        let value_part = value_part.trim_start();
        let (value, next) = read_value(value_part);
        if KEYS.contains(&key) {
            found.push((key.to_owned(), value));
        } else {
            let raw_len = value_part.len() - next.len();
            kept.push(format!("{key}={}", &value_part[..raw_len]));
        }
        rest = next.trim_start();
    }
    (kept.join(" "), found)
}

/// One value of the `key=value` form: quoted with `'` (and `\` escapes), or up to a space.
fn read_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('\'') {
        let mut value = String::new();
        let mut escaped = false;
        for (i, c) in quoted.char_indices() {
            match c {
                _ if escaped => {
                    value.push(c);
                    escaped = false;
                }
                '\\' => escaped = true,
                '\'' => return (value, &quoted[i + 1..]),
                _ => value.push(c),
            }
        }
        return (value, "");
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    let mut value = String::new();
    let mut escaped = false;
    for c in s[..end].chars() {
        if escaped || c != '\\' {
            value.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    (value, &s[end..])
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
