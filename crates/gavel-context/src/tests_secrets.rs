//! Tests of the secret-content rules: one fake secret per rule, and no false positives.
//!
//! The fake secrets are assembled at run time (a prefix plus pseudo-random characters), so this
//! file itself holds no string a secret scanner would flag.

use super::rules::CONTENT_RULES;
use super::scan;
use super::tests::{Repo, refused, rules_of};

pub(super) const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BECH32: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";

/// `n` pseudo-random characters of `alphabet` (deterministic per `seed`).
pub(super) fn fake(alphabet: &str, n: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            chars[((state >> 33) % chars.len() as u64) as usize]
        })
        .collect()
}

/// A fake secret: the line that holds it and the part that must never be echoed.
struct Case {
    rule: &'static str,
    line: String,
    secret: String,
}

fn case(rule: &'static str, prefix: &str, body: String, suffix: &str) -> Case {
    Case {
        rule,
        line: format!("{prefix}{body}{suffix}"),
        secret: body,
    }
}

fn cases() -> Vec<Case> {
    let pem_body = fake(B64, 64, 1);
    vec![
        Case {
            rule: "private-key",
            line: format!(
                "-----BEGIN {} PRIVATE KEY-----\n{pem_body}\n{}\n-----END RSA PRIVATE KEY-----",
                "RSA",
                fake(B64, 64, 2)
            ),
            secret: pem_body,
        },
        case(
            "age-secret-key",
            "AGE-SECRET-",
            format!("KEY-1{}", fake(BECH32, 58, 3)),
            "",
        ),
        case(
            "aws-access-key-id",
            "key_id: ",
            format!("AKIA{}", fake(UPPER_DIGITS, 16, 4)),
            "",
        ),
        case(
            "aws-secret-access-key",
            "aws_secret_access_key = ",
            fake(B64, 40, 5),
            "",
        ),
        case(
            "gcp-api-key",
            "GOOGLE_MAPS = '",
            format!("AIza{}", fake(URLSAFE, 35, 6)),
            "'",
        ),
        case(
            "gcp-oauth-client-secret",
            "client: ",
            format!("GOCSPX-{}", fake(URLSAFE, 28, 7)),
            "",
        ),
        case(
            "azure-storage-account-key",
            "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=",
            format!("{}==", fake(B64, 86, 8)),
            ";EndpointSuffix=core.windows.net",
        ),
        case(
            "azure-ad-client-secret",
            "AZURE_CLIENT_SECRET=",
            format!("{}8Q~{}", fake(ALNUM, 3, 9), fake(ALNUM, 34, 10)),
            "",
        ),
        case(
            "alibaba-access-key-id",
            "id = ",
            format!("LTAI{}", fake(ALNUM, 20, 11)),
            "",
        ),
        case(
            "digitalocean-token",
            "do: ",
            format!("dop_v1_{}", fake(HEX, 64, 12)),
            "",
        ),
        case(
            "heroku-api-key",
            "heroku auth: ",
            format!(
                "{}-{}-{}-{}-{}",
                fake(HEX, 8, 13),
                fake(HEX, 4, 14),
                fake(HEX, 4, 15),
                fake(HEX, 4, 16),
                fake(HEX, 12, 17)
            ),
            "",
        ),
        case(
            "databricks-token",
            "host token ",
            format!("dapi{}", fake(HEX, 32, 18)),
            "",
        ),
        case(
            "hashicorp-vault-token",
            "VAULT=",
            format!("hvs.{}", fake(URLSAFE, 90, 19)),
            "",
        ),
        case(
            "hashicorp-terraform-token",
            "tf: ",
            format!(
                "{}.atlasv1.{}",
                fake("abcdefghij0123456789", 14, 20),
                fake("abcdefghij0123456789", 65, 21)
            ),
            "",
        ),
        case(
            "github-pat",
            "gh: ",
            format!("ghp_{}", fake(ALNUM, 36, 22)),
            "",
        ),
        case(
            "github-fine-grained-pat",
            "gh: ",
            format!("github_pat_{}_{}", fake(ALNUM, 22, 23), fake(ALNUM, 59, 24)),
            "",
        ),
        case(
            "github-oauth-token",
            "gh: ",
            format!("gho_{}", fake(ALNUM, 36, 25)),
            "",
        ),
        case(
            "github-app-token",
            "gh: ",
            format!("ghs_{}", fake(ALNUM, 36, 26)),
            "",
        ),
        case(
            "github-refresh-token",
            "gh: ",
            format!("ghr_{}", fake(ALNUM, 36, 27)),
            "",
        ),
        case(
            "gitlab-token",
            "gl: ",
            format!("glpat-{}", fake(URLSAFE, 20, 28)),
            "",
        ),
        case(
            "gitlab-pipeline-trigger-token",
            "gl: ",
            format!("glptt-{}", fake(HEX, 40, 29)),
            "",
        ),
        case(
            "gitlab-runner-registration-token",
            "gl: ",
            format!("GR1348941{}", fake(ALNUM, 20, 30)),
            "",
        ),
        case(
            "npm-access-token",
            "//registry/:_authToken=",
            format!("npm_{}", fake(ALNUM, 36, 31)),
            "",
        ),
        case(
            "pypi-upload-token",
            "pw: ",
            format!("pypi-AgEIcHlwaS5vcmc{}", fake(URLSAFE, 60, 32)),
            "",
        ),
        case(
            "openai-api-key",
            "OPENAI: ",
            format!("sk-proj-{}", fake(URLSAFE, 64, 33)),
            "",
        ),
        case(
            "anthropic-api-key",
            "ANTHROPIC: ",
            format!("sk-ant-api03-{}", fake(URLSAFE, 93, 34)),
            "",
        ),
        case(
            "huggingface-token",
            "hf: ",
            format!("hf_{}", fake(LETTERS, 34, 35)),
            "",
        ),
        case(
            "groq-api-key",
            "groq: ",
            format!("gsk_{}", fake(ALNUM, 52, 36)),
            "",
        ),
        case(
            "slack-token",
            "slack: ",
            format!(
                "xoxb-{}-{}-{}",
                fake("0123456789", 12, 37),
                fake("0123456789", 13, 38),
                fake(ALNUM, 24, 39)
            ),
            "",
        ),
        case(
            "slack-app-token",
            "slack: ",
            format!(
                "xapp-1-A{}-{}-{}",
                fake("ABCDEFGHJK0123456789", 10, 40),
                fake("0123456789", 13, 41),
                fake("abcdef0123456789", 64, 42)
            ),
            "",
        ),
        case(
            "slack-webhook-url",
            "url: https://hooks.slack.com/services/",
            format!(
                "T{}/B{}/{}",
                fake(UPPER_DIGITS, 8, 43),
                fake(UPPER_DIGITS, 10, 44),
                fake(ALNUM, 24, 45)
            ),
            "",
        ),
        case(
            "discord-webhook-url",
            "url: https://discord.com/api/webhooks/",
            format!("{}/{}", fake("0123456789", 18, 46), fake(URLSAFE, 68, 47)),
            "",
        ),
        case(
            "discord-bot-token",
            "DISCORD_BOT = ",
            format!(
                "MT{}.{}.{}",
                fake(ALNUM, 24, 48),
                fake(URLSAFE, 6, 49),
                fake(URLSAFE, 38, 50)
            ),
            "",
        ),
        case(
            "telegram-bot-token",
            "bot: ",
            format!("{}:AA{}", fake("0123456789", 10, 51), fake(URLSAFE, 33, 52)),
            "",
        ),
        case(
            "stripe-secret-key",
            "stripe: ",
            format!("sk_live_{}", fake(ALNUM, 24, 53)),
            "",
        ),
        case(
            "stripe-webhook-secret",
            "stripe: ",
            format!("whsec_{}", fake(ALNUM, 32, 54)),
            "",
        ),
        case(
            "twilio-api-key",
            "twilio: ",
            format!("SK{}", fake(HEX, 32, 55)),
            "",
        ),
        case(
            "sendgrid-api-key",
            "sendgrid: ",
            format!("SG.{}.{}", fake(URLSAFE, 22, 56), fake(URLSAFE, 43, 57)),
            "",
        ),
        case(
            "mailgun-api-key",
            "mailgun: ",
            format!("key-{}", fake(HEX, 32, 58)),
            "",
        ),
        case(
            "shopify-token",
            "shop: ",
            format!("shpat_{}", fake(HEX, 32, 59)),
            "",
        ),
        case(
            "postman-api-key",
            "postman: ",
            format!("PMAK-{}-{}", fake(HEX, 24, 60), fake(HEX, 34, 61)),
            "",
        ),
        case(
            "new-relic-key",
            "nr: ",
            format!("NRAK-{}", fake(UPPER_DIGITS, 27, 62)),
            "",
        ),
        case(
            "linear-api-key",
            "linear: ",
            format!("lin_api_{}", fake(ALNUM, 40, 63)),
            "",
        ),
        case(
            "square-token",
            "square: ",
            format!("sq0atp-{}", fake(URLSAFE, 22, 64)),
            "",
        ),
        case(
            "jwt",
            "Authorization: Bearer ",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                fake(URLSAFE, 40, 65),
                fake(URLSAFE, 43, 66)
            ),
            "",
        ),
        case(
            "connection-string-password",
            "DATABASE_URL=postgres://app:",
            fake(ALNUM, 14, 67),
            "@db.internal:5432/app",
        ),
        case(
            "generic-secret-assignment",
            "db_password = \"",
            fake(ALNUM, 20, 68),
            "\"",
        ),
    ]
}

#[test]
fn every_rule_compiles() {
    assert_eq!(scan::compile_all(), CONTENT_RULES.len());
    let mut ids = scan::rule_ids();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), CONTENT_RULES.len(), "duplicate rule ids");
    for rule in CONTENT_RULES {
        for word in rule.keywords.iter().chain(rule.requires) {
            assert_eq!(
                *word,
                word.to_lowercase(),
                "{}: keywords are lowercase",
                rule.id
            );
        }
    }
}

#[test]
fn every_content_rule_refuses_its_fake_secret_naming_rule_and_line_not_secret() {
    let cases = cases();
    for case in &cases {
        let repo = Repo::new();
        repo.write(
            "notes/config.txt",
            format!("# settings\n{}\nend\n", case.line),
        );
        let error = refused(repo.validate(&["notes"]));
        let rule = format!("secret-content:{}", case.rule);
        assert_eq!(rules_of(&error), [rule.as_str()], "{}", case.rule);
        let refusal = &error.refusals[0];
        assert_eq!(refusal.path, "notes/config.txt");
        assert!(refusal.message.contains("line 2"), "{}", refusal.message);
        assert!(refusal.message.contains(&rule), "{}", refusal.message);
        assert!(refusal.message.contains("`notes/config.txt`"));
        assert!(
            !refusal.message.contains(&case.secret),
            "{}: leaks",
            case.rule
        );
        assert!(!error.to_string().contains(&case.secret));
    }
}

#[test]
fn every_content_rule_has_a_case() {
    let cases = cases();
    for rule in CONTENT_RULES {
        let covered =
            cases.iter().any(|c| c.rule == rule.id) || ["gcp-service-account"].contains(&rule.id);
        assert!(covered, "no fake secret for {}", rule.id);
    }
}

#[test]
fn legacy_openai_keys_are_found() {
    let openai = format!("sk-{}T3BlbkFJ{}", fake(ALNUM, 20, 70), fake(ALNUM, 20, 71));
    let found = scan::scan(&format!("key = {openai}"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule, "openai-api-key");
}

#[test]
fn gcp_service_account_json_is_refused() {
    let repo = Repo::new();
    let key = fake(B64, 64, 72);
    let json = format!(
        "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo\",\n  \
         \"private_key\": \"-----BEGIN {}-----\\n{key}\\n-----END PRIVATE KEY-----\\n\"\n}}\n",
        "PRIVATE KEY"
    );
    repo.write("sa.json", &json);
    let error = refused(repo.validate(&["sa.json"]));
    assert_eq!(
        rules_of(&error),
        [
            "secret-content:gcp-service-account",
            "secret-content:private-key"
        ]
    );
    assert!(error.refusals[0].message.contains("line 2"));
    assert!(error.refusals[1].message.contains("line 4"));
    assert!(!error.to_string().contains(&key));
    // Without a private key it is only a description of an account.
    repo.write(
        "sa.json",
        "{\"type\": \"service_account\", \"project_id\": \"demo\"}\n",
    );
    assert!(repo.validate(&["sa.json"]).is_ok());
}

#[test]
fn a_secret_in_the_second_file_of_a_folder_is_refused_and_names_that_file() {
    let repo = Repo::new();
    repo.write("cfg/a.toml", "name = \"demo\"\n");
    let token = format!("ghp_{}", fake(ALNUM, 36, 73));
    repo.write(
        "cfg/b.toml",
        format!("[gh]\nuser = \"me\"\ntoken = \"{token}\"\n"),
    );
    repo.write("cfg/c.toml", "x = 1\n");
    let error = refused(repo.validate(&["cfg"]));
    assert_eq!(rules_of(&error), ["secret-content:github-pat"]);
    assert_eq!(error.refusals[0].path, "cfg/b.toml");
    assert!(error.refusals[0].message.contains("line 3"));
}

#[test]
fn several_secrets_in_one_file_are_each_reported_with_their_line() {
    let text = format!(
        "a = 1\nstripe = {}\n\nnpm = {}\n",
        format_args!("sk_live_{}", fake(ALNUM, 24, 74)),
        format_args!("npm_{}", fake(ALNUM, 36, 75)),
    );
    let found: Vec<(usize, &str)> = scan::scan(&text).iter().map(|f| (f.line, f.rule)).collect();
    assert_eq!(found, [(2, "stripe-secret-key"), (4, "npm-access-token")]);
}
