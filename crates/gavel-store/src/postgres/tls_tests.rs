//! libpq's TLS parameters taken out of URLs of both forms, the environment's, and refusals.

use super::*;

fn no_env() -> PgEnv {
    PgEnv::default()
}

#[test]
fn tls_keys_leave_a_url_and_the_rest_stays() {
    let (rest, tls) = split(
        "postgres://ann:pw@db:5432/gavel?application_name=ci&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        &no_env(),
    )
    .expect("valid");
    assert_eq!(rest, "postgres://ann:pw@db:5432/gavel?application_name=ci");
    assert_eq!(tls.mode, Mode::VerifyFull);
    assert_eq!(tls.roots, Some(Roots::File(PathBuf::from("/etc/ca.pem"))));
    let (rest, tls) = split("postgres://db/gavel?sslmode=require", &no_env()).expect("valid");
    assert_eq!(rest, "postgres://db/gavel");
    assert_eq!(tls.mode, Mode::Require);
}

#[test]
fn tls_keys_leave_a_key_value_string() {
    let (rest, tls) = split(
        "host=db sslmode = verify-ca sslrootcert='/a b/ca.pem' dbname=gavel password='x y'",
        &no_env(),
    )
    .expect("valid");
    assert_eq!(rest, "host=db dbname=gavel password='x y'");
    assert_eq!(tls.mode, Mode::VerifyCa);
    assert_eq!(tls.roots, Some(Roots::File(PathBuf::from("/a b/ca.pem"))));
}

#[test]
fn the_environment_applies_when_the_url_is_silent() {
    let env = PgEnv {
        sslmode: Some("require".into()),
        ..PgEnv::default()
    };
    assert_eq!(
        split("postgres://db/g", &env).expect("ok").1.mode,
        Mode::Require
    );
    let (_, tls) = split("postgres://db/g?sslmode=disable", &env).expect("ok");
    assert_eq!(tls.mode, Mode::Disable);
    assert_eq!(
        split("postgres://db/g", &no_env()).expect("ok").1.mode,
        Mode::Prefer
    );
}

#[test]
fn wrong_tls_settings_are_refused_by_name() {
    let err = split("postgres://db/g?sslmode=strict", &no_env()).expect_err("bad mode");
    assert!(
        err.contains("the URL's sslmode is not a valid sslmode")
            && err.contains("disable, allow, prefer, require, verify-ca, verify-full"),
        "{err}"
    );
    let err = split("postgres://db/g?sslmode=verify-full", &no_env()).expect_err("no roots");
    assert!(err.contains("sslrootcert"), "{err}");
    let err = split(
        "postgres://db/g?sslmode=require&sslrootcert=system",
        &no_env(),
    )
    .expect_err("system roots need verify-full");
    assert!(err.contains("verify-full"), "{err}");
    let err = split("postgres://db/g?sslcert=/c.pem", &no_env()).expect_err("cert, no key");
    assert!(err.contains("sslkey"), "{err}");
    let (_, tls) = split("postgres://db/g?sslrootcert=system", &no_env()).expect("ok");
    assert_eq!(tls.mode, Mode::VerifyFull);
}

#[test]
fn a_unix_socket_never_uses_tls() {
    let (_, tls) = split("postgres://db/g?sslmode=require", &no_env()).expect("ok");
    let unix = [Host::Unix(PathBuf::from("/run/postgresql"))];
    assert_eq!(tls.ssl_mode(&unix), SslMode::Disable);
    assert!(tls.connector(&unix).expect("no files read").is_none());
    let tcp = [Host::Tcp("db".into())];
    assert_eq!(tls.ssl_mode(&tcp), SslMode::Require);
}

#[test]
fn a_missing_root_file_is_named() {
    let (_, tls) = split(
        "postgres://db/g?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        &no_env(),
    )
    .expect("parses");
    let err = tls
        .connector(&[Host::Tcp("db".into())])
        .err()
        .expect("the file is missing");
    assert!(err.contains("/nonexistent/ca.pem"), "{err}");
}

#[test]
fn a_key_value_string_is_not_taken_for_a_url_by_a_value_holding_a_scheme() {
    let (rest, tls) = split("host=db sslmode=require password=a://b", &no_env()).expect("valid");
    assert_eq!(tls.mode, Mode::Require);
    assert_eq!(rest, "host=db password=a://b");
}

#[test]
fn libpq_default_roots_apply_when_none_are_named() {
    let env = PgEnv {
        default_rootcert: Some("/home/ann/.postgresql/root.crt".into()),
        ..PgEnv::default()
    };
    let (_, tls) = split("postgres://db/g?sslmode=require", &env).expect("ok");
    assert_eq!(
        tls.roots,
        Some(Roots::File(PathBuf::from("/home/ann/.postgresql/root.crt")))
    );
    let (_, tls) = split("postgres://db/g?sslmode=require&sslrootcert=/ca.pem", &env).expect("ok");
    assert_eq!(tls.roots, Some(Roots::File(PathBuf::from("/ca.pem"))));
}

#[test]
fn an_invalid_sslmode_is_not_echoed_so_the_password_it_ran_into_is_not_printed() {
    for url in [
        // key=value: a quote left open, an escaped space, a value run into the next pair.
        "host=db sslmode='x password=secret' dbname=g",
        "host=db sslmode=x\\ password=secret dbname=g",
        // URL: a `?` or a space where `&` belongs, an encoded `&`.
        "postgres://ann@db/g?sslmode=require?password=secret",
        "postgres://ann@db/g?sslmode=x password=secret",
        "postgres://ann@db/g?sslmode=x%26password%3Dsecret",
    ] {
        let err = split(url, &no_env()).expect_err("an invalid sslmode");
        assert!(!err.contains("secret"), "{url}: {err}");
        assert!(
            err.contains("sslmode") && err.contains("verify-ca, verify-full"),
            "{url}: {err}"
        );
    }
    let env = PgEnv {
        sslmode: Some("x password=secret".into()),
        ..PgEnv::default()
    };
    let err = split("postgres://db/g", &env).expect_err("an invalid PGSSLMODE");
    assert!(
        err.contains("PGSSLMODE") && !err.contains("secret"),
        "{err}"
    );
}

#[test]
fn a_certificate_path_that_ran_into_a_password_is_not_echoed() {
    let tcp = [Host::Tcp("db".into())];
    for url in [
        "host=db sslmode=verify-full sslrootcert='/nonexistent/ca.pem password=secret'",
        "host=db sslcert='/nonexistent/c.pem password=secret' sslkey=/nonexistent/k.pem",
        "postgres://db/g?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem%26password%3Dsecret",
    ] {
        let (_, tls) = split(url, &no_env()).expect("parses");
        let err = tls.connector(&tcp).err().expect("the file is missing");
        assert!(!err.contains("secret"), "{url}: {err}");
        assert!(err.contains("not shown"), "{url}: {err}");
    }
    // A key file that cannot be read is named when its path is only a path.
    let dir = tempfile::tempdir().expect("tempdir");
    let cert = dir.path().join("client.pem");
    std::fs::write(&cert, "not a certificate\n").expect("cert");
    let (_, tls) = split(
        &format!(
            "host=db sslmode=require sslcert={} sslkey=/nonexistent/k.pem",
            cert.display()
        ),
        &no_env(),
    )
    .expect("parses");
    let err = tls.connector(&tcp).err().expect("no certificate in it");
    assert!(
        err.contains(&format!("sslcert `{}`", cert.display())),
        "{err}"
    );
}
