//! `gavel ui [--port N] [--open]`: the report pages served on 127.0.0.1 only, read-only, until
//! Ctrl-C. The URL it prints carries a random token; a request without it, for another Host
//! (a DNS-rebinding page), with two `Host` headers or an absolute URI naming another host (400),
//! or with another method than GET/HEAD is refused before anything is read. Pages come from [`gavel_report::Site`], so they are the ones `gavel report` writes.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::Response;
use clap::Args;
use gavel_report::{Page, RunsQuery, Site, SiteMode};

use crate::context::Context;
use crate::error::CliError;
use crate::exit::Exit;
use crate::kinds::ChangeSettings;
use crate::store::AnyStore;

#[derive(Debug, Args)]
pub struct UiArgs {
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the printed URL in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// What every request is checked against.
struct Served {
    store: AnyStore,
    /// The repository's `[changes] root`, read for the changes board.
    changes_root: std::path::PathBuf,
    token: String,
    /// The Host values a browser sends for this server (`127.0.0.1:PORT`, `localhost:PORT`;
    /// without the port too on port 80, which browsers leave out).
    hosts: Vec<String>,
}

pub fn cmd_ui(args: &UiArgs, ctx: Context) -> Result<Exit, CliError> {
    let store = ctx.open_reader("gavel ui")?;
    let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)))
        .map_err(|e| {
            CliError::error(format!("cannot listen on 127.0.0.1:{}: {e}", args.port))
                .hint("pick another --port, or leave it out for a free one")
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| CliError::error(format!("reading the listening address: {e}")))?
        .port();
    let token = new_token()?;
    let url = format!("http://127.0.0.1:{port}/{token}/");
    ctx.ui.out(&url);
    ctx.ui
        .info("serving the runs read-only on 127.0.0.1 until Ctrl-C");
    if args.open {
        open_in_browser(&ctx, &url);
    }
    let served = Arc::new(Served {
        store,
        changes_root: ctx
            .settings
            .repo_root
            .join(&ctx.settings.section::<ChangeSettings>().root),
        token,
        hosts: hosts(port),
    });
    serve(listener, served)
}

fn serve(listener: std::net::TcpListener, served: Arc<Served>) -> Result<Exit, CliError> {
    listener
        .set_nonblocking(true)
        .map_err(|e| CliError::error(format!("preparing the listener: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| CliError::error(format!("starting the server: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| CliError::error(format!("preparing the listener: {e}")))?;
        let app = Router::new().fallback(handle).with_state(served);
        axum::serve(listener, app)
            .await
            .map_err(|e| CliError::error(format!("serving: {e}")))
    })?;
    Ok(Exit::Success)
}

fn hosts(port: u16) -> Vec<String> {
    let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if port == 80 {
        hosts.extend(["127.0.0.1".to_owned(), "localhost".to_owned()]);
    }
    hosts
}

/// Whether `given` is the token, compared in a time that does not depend on where they differ.
fn token_matches(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// 32 hex digits from the OS's random source.
fn new_token() -> Result<String, CliError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| CliError::error(format!("no random token available: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn open_in_browser(ctx: &Context, url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let opened = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match opened {
        // Reaped when it exits (an opener hands the URL over and returns).
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => ctx.ui.info(&format!(
            "could not run {program} ({e}); open the URL above yourself"
        )),
    }
}

fn respond(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(gavel_report::site::SERVED_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refuse(status: StatusCode, why: &str) -> Response {
    respond(status, "text/plain; charset=utf-8", format!("{why}\n"))
}

fn html(status: StatusCode, body: String) -> Response {
    respond(status, "text/html; charset=utf-8", body)
}

async fn handle(State(served): State<Arc<Served>>, request: Request<Body>) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET only");
    }
    if let Some(why) = ambiguous_host(&request, &served.hosts) {
        return refuse(StatusCode::BAD_REQUEST, why);
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !served.hosts.iter().any(|h| h == host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "refused: this server answers only to 127.0.0.1 and localhost",
        );
    }
    let path = request.uri().path();
    let (given, rest) = match path.strip_prefix('/') {
        Some(p) => match p.split_once('/') {
            Some((given, rest)) => (given, Some(rest)),
            None => (p, None),
        },
        None => ("", None),
    };
    if !token_matches(given, &served.token) {
        return refuse(StatusCode::FORBIDDEN, "refused: the URL's token is missing");
    }
    let Some(rest) = rest else {
        let mut r = refuse(StatusCode::PERMANENT_REDIRECT, "moved");
        if let Ok(v) = HeaderValue::from_str(&format!("/{}/", served.token)) {
            r.headers_mut().insert(header::LOCATION, v);
        }
        return r;
    };
    let rest = rest.to_owned();
    // Error pages link the stylesheet and the runs from wherever they are answered.
    let root = root_of(&rest);
    let query = match Query::<RunsQuery>::try_from_uri(request.uri()) {
        Ok(Query(q)) => q,
        Err(e) => {
            return html(
                StatusCode::BAD_REQUEST,
                Site::error_page(&root, "Bad request", &e.body_text()),
            );
        }
    };
    let rendered = tokio::task::spawn_blocking(move || {
        let changes = served.changes_root.clone();
        let read = move || crate::commands::change::status::cards(&changes);
        let site = Site::new(&*served.store, SiteMode::Served).with_changes(&read);
        site.route(&rest, &query)
    })
    .await;
    match rendered {
        Ok(Ok(Some(Page::Html(body)))) => html(StatusCode::OK, body),
        Ok(Ok(Some(Page::Css(css)))) => {
            respond(StatusCode::OK, "text/css; charset=utf-8", css.to_owned())
        }
        Ok(Ok(None)) => html(
            StatusCode::NOT_FOUND,
            Site::error_page(
                &root,
                "Not found",
                "There is no such page or run in this store.",
            ),
        ),
        Ok(Err(e)) => {
            let status = match e {
                gavel_report::ReportError::BadQuery { .. } => StatusCode::BAD_REQUEST,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            html(
                status,
                Site::error_page(&root, "Cannot show this page", &e.to_string()),
            )
        }
        Err(e) => html(
            StatusCode::INTERNAL_SERVER_ERROR,
            Site::error_page(&root, "Cannot show this page", &e.to_string()),
        ),
    }
}

/// Why a request does not say plainly which host it is for, if it does not: more than one
/// `Host` header (a proxy and the server could each read another), or an absolute-form target
/// (`GET http://evil.example/ HTTP/1.1`), which HTTP/1.1 says wins over `Host`, naming another
/// host than this server's, or another scheme than `http` (RFC 9112, sections 3.2 and 3.2.2).
fn ambiguous_host(request: &Request<Body>, served: &[String]) -> Option<&'static str> {
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return Some("refused: more than one Host header");
    }
    let uri = request.uri();
    let authority = uri.authority()?;
    let ours = uri.scheme_str() == Some("http") && served.iter().any(|h| h == authority.as_str());
    (!ours).then_some("refused: the request names another host than this server")
}

/// The way back to the site's top from `rest` (`runs/3/files/1.html` → `../../../`).
fn root_of(rest: &str) -> String {
    "../".repeat(rest.matches('/').count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_must_match_whole() {
        let t = "0123456789abcdef0123456789abcdef";
        assert!(token_matches(t, t));
        assert!(!token_matches("0123456789abcdef0123456789abcdee", t));
        assert!(!token_matches("0123456789abcdef", t));
        assert!(!token_matches("", t));
        assert!(!token_matches(&format!("{t}0"), t));
    }

    #[test]
    fn port_80_also_accepts_the_bare_host() {
        assert_eq!(hosts(8080), ["127.0.0.1:8080", "localhost:8080"]);
        assert!(hosts(80).contains(&"localhost".to_owned()));
    }

    #[test]
    fn error_pages_find_the_top_from_any_depth() {
        assert_eq!(root_of("index.html"), "");
        assert_eq!(root_of("runs/3/index.html"), "../../");
        assert_eq!(root_of("runs/3/files/1.html"), "../../../");
    }
}
