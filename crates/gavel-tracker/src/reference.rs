//! Issue references as people write them: `12`, `#12`, `owner/name#12` and issue URLs
//! (`https://github.com/owner/name/issues/12`), parsed once for every tracker.
//!
//! A pull request URL is refused here, before any request: a design or an implementation is
//! made from an issue, never from a pull request.

use super::TrackerError;

/// A parsed issue reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueRef {
    pub number: u64,
    /// `owner/name` when the reference names a repository.
    pub repo: Option<String>,
    /// The web host when the reference is a URL (`github.com`).
    pub host: Option<String>,
}

/// Parses a reference, or says which forms are accepted.
pub fn parse(reference: &str) -> Result<IssueRef, TrackerError> {
    let text = reference.trim();
    let bad = |why: &str| TrackerError::BadReference {
        message: format!(
            "`{reference}` is not an issue reference ({why}); use 12, #12, owner/name#12 or an issue URL"
        ),
    };
    if let Some(rest) = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
    {
        let rest = rest.split(['#', '?']).next().unwrap_or_default();
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        let [host, owner, name, kind, number] = parts.as_slice() else {
            return Err(bad("a URL must look like https://HOST/OWNER/NAME/issues/N"));
        };
        if *kind == "pull" {
            return Err(TrackerError::BadReference {
                message: format!("`{reference}` is a pull request, not an issue"),
            });
        }
        if *kind != "issues" {
            return Err(bad("a URL must look like https://HOST/OWNER/NAME/issues/N"));
        }
        let repo = format!("{owner}/{name}");
        check_repo(&repo).map_err(|why| bad(&why))?;
        return Ok(IssueRef {
            number: number_of(number).ok_or_else(|| bad("the issue number is not a number"))?,
            repo: Some(repo),
            host: Some(host.to_ascii_lowercase()),
        });
    }
    if let Some((repo, number)) = text.split_once('#')
        && !repo.is_empty()
    {
        check_repo(repo).map_err(|why| bad(&why))?;
        return Ok(IssueRef {
            number: number_of(number).ok_or_else(|| bad("the issue number is not a number"))?,
            repo: Some(repo.to_owned()),
            host: None,
        });
    }
    let number = text.strip_prefix('#').unwrap_or(text);
    Ok(IssueRef {
        number: number_of(number).ok_or_else(|| bad("not a number"))?,
        repo: None,
        host: None,
    })
}

/// A positive issue number.
fn number_of(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok().filter(|n| *n > 0)
}

/// Checks an `owner/name` pair: one slash, each side made of GitHub's name characters.
pub fn check_repo(repo: &str) -> Result<(), String> {
    let Some((owner, name)) = repo.split_once('/') else {
        return Err(format!("`{repo}` is not owner/name"));
    };
    let ok = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if ok(owner) && ok(name) {
        Ok(())
    } else {
        Err(format!("`{repo}` is not owner/name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> IssueRef {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn every_form_parses() {
        assert_eq!(ok("12").number, 12);
        assert_eq!(ok(" #12 ").number, 12);
        let r = ok("octo/app#7");
        assert_eq!((r.number, r.repo.as_deref()), (7, Some("octo/app")));
        let r = ok("https://github.com/Octo/my.app/issues/42");
        assert_eq!(
            (r.number, r.repo.as_deref(), r.host.as_deref()),
            (42, Some("Octo/my.app"), Some("github.com"))
        );
        let r = ok("https://ghe.example.com/team/svc/issues/3/#issuecomment-1");
        assert_eq!((r.number, r.host.as_deref()), (3, Some("ghe.example.com")));
        assert_eq!(ok("https://github.com/o/r/issues/5?x=1").number, 5);
    }

    #[test]
    fn bad_references_say_which_forms_work() {
        for bad in [
            "",
            "#",
            "0",
            "-3",
            "12a",
            "o/r#",
            "o/r#x",
            "o#1",
            "a/b/c#1",
            "../x#1",
            "https://github.com/o/r",
            "https://github.com/o/r/issues/x",
            "https://github.com/o/r/wiki/1",
        ] {
            let e = parse(bad).expect_err(bad).to_string();
            assert!(e.contains("owner/name#12"), "{bad}: {e}");
        }
        let e = parse("https://github.com/o/r/pull/9").expect_err("pull");
        assert!(e.to_string().contains("pull request"), "{e}");
    }
}
