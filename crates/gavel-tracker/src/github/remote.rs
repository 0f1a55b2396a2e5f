//! Which GitHub repository a clone belongs to, from its `origin` remote: the https and ssh
//! forms git accepts (`https://github.com/o/r.git`, `git@github.com:o/r`,
//! `ssh://git@host:22/o/r.git`), with or without `.git`, and the API URL that host serves.
//!
//! A remote URL may carry credentials (`https://user:token@host/...`); they are dropped on
//! parsing and never appear in a message.

use crate::reference::check_repo;

/// A repository on a GitHub host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRepo {
    /// `github.com`, or a GitHub Enterprise host (with its port for http(s) remotes).
    pub host: String,
    /// `owner/name`.
    pub repo: String,
}

/// Parses a remote URL, or says why it is not a GitHub repository URL (without echoing any
/// credentials it holds).
pub fn parse_remote(url: &str) -> Result<RemoteRepo, String> {
    let url = url.trim();
    let shown = redact(url);
    let not_github = || {
        format!(
            "the remote `{shown}` is not a GitHub repository URL (https://HOST/OWNER/NAME or git@HOST:OWNER/NAME)"
        )
    };
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(
            scheme.as_str(),
            "https" | "http" | "ssh" | "git" | "git+ssh"
        ) {
            return Err(not_github());
        }
        let (authority, path) = rest.split_once('/').ok_or_else(not_github)?;
        let host = authority.rsplit('@').next().unwrap_or(authority);
        // An ssh port is the ssh server's, not the web host's.
        let host = if scheme.contains("ssh") || scheme == "git" {
            host.split(':').next().unwrap_or(host)
        } else {
            host
        };
        (host.to_owned(), path.to_owned())
    } else if let Some((authority, path)) = url.split_once(':')
        && !authority.contains('/')
    {
        // scp-like: [user@]host:owner/name
        let host = authority.rsplit('@').next().unwrap_or(authority);
        (host.to_owned(), path.to_owned())
    } else {
        return Err(not_github());
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if host.is_empty() || check_repo(path).is_err() {
        return Err(not_github());
    }
    Ok(RemoteRepo {
        host: host.to_ascii_lowercase(),
        repo: path.to_owned(),
    })
}

/// The REST API base URL a host serves: `https://api.github.com` for github.com,
/// `https://HOST/api/v3` for GitHub Enterprise Server.
pub fn api_url_for(host: &str) -> String {
    if host == "github.com" || host == "www.github.com" {
        "https://api.github.com".into()
    } else {
        format!("https://{host}/api/v3")
    }
}

/// The web host an API URL belongs to (`api.github.com` → `github.com`), for `gh auth token`
/// and for checking issue URLs.
pub fn host_of_api(api_url: &str) -> String {
    let rest = api_url.split_once("://").map_or(api_url, |(_, r)| r);
    let host = rest.split('/').next().unwrap_or(rest).to_ascii_lowercase();
    match host.as_str() {
        "api.github.com" => "github.com".into(),
        _ => host,
    }
}

/// A URL with any `user:password@` removed.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}/{path}"),
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(url: &str) -> (String, String) {
        let r = parse_remote(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        (r.host, r.repo)
    }

    #[test]
    fn https_and_ssh_forms_with_or_without_dot_git() {
        let want = ("github.com".to_owned(), "octo/app".to_owned());
        for url in [
            "https://github.com/octo/app.git",
            "https://github.com/octo/app",
            "https://github.com/octo/app/",
            "http://github.com/octo/app.git",
            "https://someone@github.com/octo/app.git",
            "https://someone:ghp_secret@github.com/octo/app",
            "git@github.com:octo/app.git",
            "git@github.com:octo/app",
            "org-123@github.com:octo/app.git",
            "ssh://git@github.com/octo/app.git",
            "ssh://git@github.com:22/octo/app",
            "git+ssh://git@github.com/octo/app.git",
            "git://github.com/octo/app.git",
            "  https://GitHub.com/octo/app.git\n",
        ] {
            assert_eq!(ok(url), want, "{url}");
        }
        assert_eq!(
            ok("https://ghe.example.com:8443/team/my.svc.git"),
            ("ghe.example.com:8443".into(), "team/my.svc".into())
        );
        assert_eq!(
            ok("git@ghe.example.com:team/svc"),
            ("ghe.example.com".into(), "team/svc".into())
        );
    }

    #[test]
    fn other_remotes_are_refused_without_their_credentials() {
        for url in [
            "/srv/git/app.git",
            "../app",
            "file:///srv/app.git",
            "https://github.com/octo",
            "https://github.com/a/b/c",
            "git@github.com:octo",
            "",
        ] {
            assert!(parse_remote(url).is_err(), "{url}");
        }
        let e = parse_remote("https://me:ghp_secret@github.com/only-owner").expect_err("short");
        assert!(!e.contains("ghp_secret"), "{e}");
        assert!(e.contains("***@github.com"), "{e}");
    }

    #[test]
    fn api_urls_and_hosts() {
        assert_eq!(api_url_for("github.com"), "https://api.github.com");
        assert_eq!(api_url_for("ghe.corp"), "https://ghe.corp/api/v3");
        assert_eq!(host_of_api("https://api.github.com"), "github.com");
        assert_eq!(host_of_api("https://ghe.corp/api/v3"), "ghe.corp");
        assert_eq!(host_of_api("http://127.0.0.1:4000"), "127.0.0.1:4000");
    }
}
