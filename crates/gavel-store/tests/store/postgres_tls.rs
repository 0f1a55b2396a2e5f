//! TLS to PostgreSQL on a real server that takes TCP connections only over TLS: each `sslmode`
//! means what it means to libpq, certificates are checked against `sslrootcert`, and a client
//! certificate logs in a user who has no other way in.

use gavel_core::RunStore;
use gavel_store::{PgEnv, PgStore};
use gavel_store_testkit::TempPostgres;

const NOW: &str = "2026-01-30T14:33:20Z";

fn opens(url: &str, env: &PgEnv) -> PgStore {
    let store = PgStore::open_project(url, "p", env).unwrap_or_else(|e| panic!("{url}: {e}"));
    let run = store
        .create_run("w", "s", b"{}", "n", NOW)
        .expect("a write over TLS");
    assert_eq!(
        store.runs().expect("a read over TLS").last().map(|r| r.id),
        Some(run)
    );
    store
}

fn refused(url: &str, env: &PgEnv) -> String {
    match PgStore::open_project(url, "p", env) {
        Ok(_) => panic!("{url} should have been refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_sslmode_means_what_it_means_to_libpq() {
    let pg = TempPostgres::start_tls();
    let files = pg.tls_files().clone();
    let none = PgEnv::default();
    let ca = format!("sslrootcert={}", files.ca.display());
    let other = format!("sslrootcert={}", files.other_ca.display());

    // The server takes no plain TCP connection, so every store that opens spoke TLS.
    let err = refused(
        &pg.tcp_url("127.0.0.1", "postgres", "postgres", "sslmode=disable"),
        &none,
    );
    assert!(err.contains("no encryption"), "{err}");
    assert!(
        !err.contains("sslmode=disable") || err.contains("127.0.0.1"),
        "{err}"
    );

    // prefer (the default) and require encrypt without checking the certificate.
    opens(
        &pg.tcp_url("127.0.0.1", "postgres", "postgres", "connect_timeout=5"),
        &none,
    );
    opens(
        &pg.tcp_url("127.0.0.1", "postgres", "postgres", "sslmode=require"),
        &none,
    );

    // verify-full: the certificate names localhost, not 127.0.0.1.
    opens(
        &pg.tcp_url(
            "localhost",
            "postgres",
            "postgres",
            &format!("sslmode=verify-full&{ca}"),
        ),
        &none,
    );
    let err = refused(
        &pg.tcp_url(
            "127.0.0.1",
            "postgres",
            "postgres",
            &format!("sslmode=verify-full&{ca}"),
        ),
        &none,
    );
    assert!(err.contains("certificate"), "{err}");
    // verify-ca checks the chain only.
    opens(
        &pg.tcp_url(
            "127.0.0.1",
            "postgres",
            "postgres",
            &format!("sslmode=verify-ca&{ca}"),
        ),
        &none,
    );

    // A certificate from another authority is refused, by require too once roots are given.
    for mode in ["verify-ca", "verify-full", "require"] {
        let url = pg.tcp_url(
            "localhost",
            "postgres",
            "postgres",
            &format!("sslmode={mode}&{other}"),
        );
        let err = refused(&url, &none);
        assert!(err.contains("certificate"), "{mode}: {err}");
    }

    // PGSSLMODE and PGSSLROOTCERT apply when the URL is silent.
    let env = PgEnv {
        sslmode: Some("verify-full".into()),
        sslrootcert: Some(files.ca.display().to_string()),
        ..PgEnv::default()
    };
    opens(
        &pg.tcp_url("localhost", "postgres", "postgres", "connect_timeout=5"),
        &env,
    );
    let err = refused(
        &pg.tcp_url("127.0.0.1", "postgres", "postgres", "connect_timeout=5"),
        &env,
    );
    assert!(err.contains("certificate"), "{err}");

    // The unix socket never uses TLS, whatever sslmode says.
    opens(&format!("{}?sslmode=require", pg.url()), &none);
}

#[test]
fn a_client_certificate_logs_in_the_user_it_names() {
    let pg = TempPostgres::start_tls();
    let files = pg.tls_files().clone();
    let none = PgEnv::default();
    let ca = format!("sslrootcert={}", files.ca.display());
    let err = refused(
        &pg.tcp_url(
            "localhost",
            "certuser",
            "certdb",
            &format!("sslmode=verify-full&{ca}"),
        ),
        &none,
    );
    assert!(
        err.contains("certuser") || err.contains("certificate"),
        "{err}"
    );
    let with_cert = format!(
        "sslmode=verify-full&{ca}&sslcert={}&sslkey={}",
        files.client_cert.display(),
        files.client_key.display()
    );
    opens(
        &pg.tcp_url("localhost", "certuser", "certdb", &with_cert),
        &none,
    );
    let err = refused(
        &pg.tcp_url(
            "localhost",
            "certuser",
            "postgres",
            &format!("sslmode=verify-full&{ca}&sslcert=/nonexistent.pem&sslkey=/nonexistent.key"),
        ),
        &none,
    );
    assert!(err.contains("/nonexistent.pem"), "{err}");
}
