//! Tests that ordinary text is not refused: placeholders, low-entropy values, code that merely
//! talks about passwords and tokens, and the bare/quoted assignment distinction.

use super::scan::{self, entropy};
use super::tests_secrets::{ALNUM, fake};

#[test]
fn placeholders_and_low_entropy_values_are_not_secrets() {
    let lines = [
        "password = \"changeme\"".to_owned(),
        "password: changeme".to_owned(),
        "DB_PASSWORD=${DB_PASSWORD}".to_owned(),
        "api_key = \"<your-api-key-here>\"".to_owned(),
        "token = \"xxxxxxxxxxxxxxxxxxxxxxxx\"".to_owned(),
        "secret: \"aaaaaaaaaaaaaaaaaaaaaaaaa1\"".to_owned(),
        "password = \"abababababababab12\"".to_owned(),
        "api_token = \"{{ vault_api_token }}\"".to_owned(),
        "let token = lexer.next_token(&mut state1);".to_owned(),
        "max_tokens = 200000".to_owned(),
        "token_url = \"https://oauth2.googleapis.com/token\"".to_owned(),
        "password_file = \"/run/secrets/db_password1\"".to_owned(),
        "Set the `GITHUB_TOKEN` secret in your repository settings.".to_owned(),
        "DATABASE_URL=postgres://user:password@localhost/app".to_owned(),
        "DATABASE_URL=postgres://app:${PGPASSWORD}@db/app".to_owned(),
        "REDIS_URL=redis://localhost:6379/0".to_owned(),
        "amqp://guest:guest@localhost:5672/".to_owned(),
        "Keys look like -----BEGIN RSA PRIVATE KEY----- followed by base64.".to_owned(),
        format!("example: AKIA{}", "X".repeat(16)),
        format!("stripe test key: sk_test_{}", fake(ALNUM, 24, 76)),
        "const SECRET_RULE: &str = \"secret-content:aws-access-key-id\";".to_owned(),
        "fn check(password: &str, token: Option<&str>) -> bool { true }".to_owned(),
        "if password == \"correcthorsebattery\" { return; }".to_owned(),
        "            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(".to_owned(),
        "\"input\": \"redis://foo:bar@somehost:6379/0\",".to_owned(),
        "\"password\": \"%20!%22$%&'()*+,-.%3A%3B%3C%3D%3E%40%5B%5C%5D%5E_%60%7B%7C%7D~\","
            .to_owned(),
        format!("let secret = \"sk-ant-api03-{}\";", "SECRETSECRET"),
        format!("\"EAAA{}\\n\"", fake(ALNUM, 60, 80)),
    ];
    for line in &lines {
        let found = scan::scan(line);
        assert!(found.is_empty(), "false positive {found:?} on {line:?}");
    }
}

#[test]
fn generic_rule_is_not_repeated_on_a_line_a_specific_rule_caught() {
    let text = format!("github_token = \"ghp_{}\"\n", fake(ALNUM, 36, 77));
    let found: Vec<&str> = scan::scan(&text).iter().map(|f| f.rule).collect();
    assert_eq!(found, ["github-pat"]);
}

#[test]
fn bare_assignments_count_only_as_whole_lines() {
    let value = fake(ALNUM, 24, 78);
    assert_eq!(scan::scan(&format!("export API_TOKEN={value}\n")).len(), 1);
    assert_eq!(
        scan::scan(&format!("  client_secret: {value}  # prod\n")).len(),
        1
    );
    assert!(scan::scan(&format!("let x = token={value} + y;\n")).is_empty());
}

#[test]
fn entropy_is_bits_per_character() {
    assert_eq!(entropy(""), 0.0);
    assert_eq!(entropy("aaaa"), 0.0);
    assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    assert!(entropy(&fake(ALNUM, 40, 79)) > 4.0);
}
