//! The secret rules, as data.
//!
//! Two tables: file NAMES that hold secrets by convention ([`SECRET_NAMES`], globs on the file
//! name, case-insensitive) and secret CONTENT ([`CONTENT_RULES`], one regex per kind of
//! credential). The kinds follow the public list gitleaks covers; the regexes are gavel's own.
//! Each content rule carries lowercase `keywords`: a file is only run through a rule's regex
//! when it contains one of them (an aho-corasick pre-filter, see `scan.rs`), so adding a rule
//! costs almost nothing on files that cannot match it. Adding a rule is adding a row here plus
//! a test with a fake secret in `tests_secrets.rs`.

/// Globs on a file's name (not its folder) that mark it as a secret by name. Matched
/// case-insensitively.
pub const SECRET_NAMES: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "*.jks",
    "*.keystore",
    "*.kdbx",
];

/// Broad name globs: like [`SECRET_NAMES`], except for files whose extension says they are
/// source code or prose ([`SOURCE_EXTENSIONS`]): `credentials.json` and `k8s-secrets.yaml` are
/// refused, `credentials.rs` and `secret_rules.md` are code and docs about secrets and go on
/// to the content rules like any other file.
pub const BROAD_SECRET_NAMES: &[&str] = &["credentials*", "*secret*"];

/// Extensions (lowercase) exempt from [`BROAD_SECRET_NAMES`].
pub const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "kt", "scala", "rb", "php",
    "c", "h", "cc", "cpp", "hpp", "cs", "swift", "md", "rst", "adoc",
];

/// What a content rule checks beyond its regex matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The match is the finding (subject to `min_entropy`).
    Match,
    /// `name = value` assignments: group 1 is the name, groups 2-4 a quoted value, group 5 a
    /// bare one (accepted only as a whole `NAME=value` line, as in `.env` or YAML files). The
    /// value must be long, mixed, high-entropy and not a placeholder; see `scan.rs`.
    Assignment,
    /// `scheme://user:password@host`: group 1 (the password) must not be a placeholder.
    UrlPassword,
}

/// One kind of secret found by its content.
#[derive(Debug)]
pub struct Rule {
    /// Stable id; refusals read `secret-content:{id}`.
    pub id: &'static str,
    /// What it finds, for messages ("an AWS access key id").
    pub description: &'static str,
    /// The pattern (Rust `regex` syntax).
    pub regex: &'static str,
    /// Lowercase literals; the regex runs only on files containing one of them.
    pub keywords: &'static [&'static str],
    /// Lowercase literals that must ALL appear in the file as well (e.g. a service-account
    /// JSON must also hold a `private_key`).
    pub requires: &'static [&'static str],
    /// The capture group that holds the secret (0: the whole match), for the entropy check;
    /// when it did not take part in the match, the first later group that did.
    pub group: usize,
    /// Minimum Shannon entropy (bits per char) of the secret; 0 for none.
    pub min_entropy: f64,
    /// Extra validation.
    pub check: Check,
}

/// Shorthand for the common case: the whole match is the secret, no entropy floor.
const fn rule(
    id: &'static str,
    description: &'static str,
    regex: &'static str,
    keywords: &'static [&'static str],
) -> Rule {
    Rule {
        id,
        description,
        regex,
        keywords,
        requires: &[],
        group: 0,
        min_entropy: 0.0,
        check: Check::Match,
    }
}

/// Rule ids that are guesses from context rather than a vendor's token format; on a line where
/// a specific rule already fired they are not reported again.
pub const GENERIC_RULES: &[&str] = &["generic-secret-assignment", "connection-string-password"];

/// Minimum entropy (bits per char) and length of a value assigned to a secret-looking name.
pub const ASSIGNMENT_MIN_ENTROPY: f64 = 3.5;
/// See [`ASSIGNMENT_MIN_ENTROPY`].
pub const ASSIGNMENT_MIN_LEN: usize = 16;

/// The content rules. Order is the order of reports on one line.
pub static CONTENT_RULES: &[Rule] = &[
    // --- Keys and key files --------------------------------------------------------------
    rule(
        "private-key",
        "a private key block",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:\s|\\n|\\r)*(?:[A-Za-z0-9-]+: [^\n]*(?:\s|\\n)+)*[A-Za-z0-9+/=]{40,}",
        &["-----begin"],
    ),
    rule(
        "age-secret-key",
        "an age secret key",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
        &["age-secret-key-1"],
    ),
    // --- Cloud providers -----------------------------------------------------------------
    Rule {
        min_entropy: 3.0,
        ..rule(
            "aws-access-key-id",
            "an AWS access key id",
            r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
            &["akia", "asia", "abia", "acca", "a3t"],
        )
    },
    Rule {
        group: 1,
        min_entropy: 3.5,
        ..rule(
            "aws-secret-access-key",
            "an AWS secret access key",
            r#"(?i)aws.{0,20}?secret.{0,20}?(?:=|:|=>|,)\s*["'`]?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
            &["aws"],
        )
    },
    Rule {
        requires: &["private_key"],
        ..rule(
            "gcp-service-account",
            "a Google Cloud service-account key (JSON with a private key)",
            r#""type"\s*:\s*"service_account""#,
            &["service_account"],
        )
    },
    rule(
        "gcp-api-key",
        "a Google API key",
        r"\bAIza[0-9A-Za-z_-]{35}(?:[^0-9A-Za-z_-]|$)",
        &["aiza"],
    ),
    rule(
        "gcp-oauth-client-secret",
        "a Google OAuth client secret",
        r"\bGOCSPX-[0-9A-Za-z_-]{28}(?:[^0-9A-Za-z_-]|$)",
        &["gocspx-"],
    ),
    Rule {
        group: 1,
        ..rule(
            "azure-storage-account-key",
            "an Azure storage account key",
            r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{40,}={0,2})",
            &["accountkey", "sharedaccesskey"],
        )
    },
    Rule {
        group: 1,
        ..rule(
            "azure-ad-client-secret",
            "an Azure AD (Entra) client secret",
            r#"(?:^|[\s"'`=:(,>])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:$|[\s"'`<),;])"#,
            &["q~"],
        )
    },
    Rule {
        group: 1,
        ..rule(
            "alibaba-access-key-id",
            "an Alibaba Cloud access key id",
            r"\b(LTAI[A-Za-z0-9]{20})\b",
            &["ltai"],
        )
    },
    rule(
        "digitalocean-token",
        "a DigitalOcean token",
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
    ),
    Rule {
        group: 1,
        ..rule(
            "heroku-api-key",
            "a Heroku API key",
            r"(?i)(?:heroku.{0,40}?\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b|\b(HRKU-AA[0-9A-Za-z_-]{58}))",
            &["heroku", "hrku-"],
        )
    },
    rule(
        "databricks-token",
        "a Databricks token",
        r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        &["dapi"],
    ),
    rule(
        "hashicorp-vault-token",
        "a HashiCorp Vault token",
        r"\bhv[sb]\.[A-Za-z0-9_-]{24,}",
        &["hvs.", "hvb."],
    ),
    rule(
        "hashicorp-terraform-token",
        "a Terraform Cloud / HCP API token",
        r"\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,70}\b",
        &["atlasv1"],
    ),
    // --- Code hosting and packages -------------------------------------------------------
    rule(
        "github-pat",
        "a GitHub personal access token",
        r"\bghp_[0-9A-Za-z]{36}\b",
        &["ghp_"],
    ),
    rule(
        "github-fine-grained-pat",
        "a GitHub fine-grained personal access token",
        r"\bgithub_pat_[0-9A-Za-z_]{82}\b",
        &["github_pat_"],
    ),
    rule(
        "github-oauth-token",
        "a GitHub OAuth access token",
        r"\bgho_[0-9A-Za-z]{36}\b",
        &["gho_"],
    ),
    rule(
        "github-app-token",
        "a GitHub App token",
        r"\bgh[us]_[0-9A-Za-z]{36}\b",
        &["ghu_", "ghs_"],
    ),
    rule(
        "github-refresh-token",
        "a GitHub refresh token",
        r"\bghr_[0-9A-Za-z]{36,76}\b",
        &["ghr_"],
    ),
    rule(
        "gitlab-token",
        "a GitLab token",
        r"\b(?:glpat|gldt|glrt|gloas|glcbt|glft|glimt|glagent|glsoat)-[0-9A-Za-z_-]{20,}",
        &[
            "glpat-", "gldt-", "glrt-", "gloas-", "glcbt-", "glft-", "glimt-", "glagent-",
            "glsoat-",
        ],
    ),
    rule(
        "gitlab-pipeline-trigger-token",
        "a GitLab pipeline trigger token",
        r"\bglptt-[0-9a-f]{40}\b",
        &["glptt-"],
    ),
    rule(
        "gitlab-runner-registration-token",
        "a GitLab runner registration token",
        r"\bGR1348941[0-9A-Za-z_-]{20}",
        &["gr1348941"],
    ),
    rule(
        "npm-access-token",
        "an npm access token",
        r"\bnpm_[0-9A-Za-z]{36}\b",
        &["npm_"],
    ),
    rule(
        "pypi-upload-token",
        "a PyPI upload token",
        r"\bpypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,}",
        &["pypi-ageichlwas5vcmc"],
    ),
    // --- AI providers --------------------------------------------------------------------
    rule(
        "openai-api-key",
        "an OpenAI API key",
        r"\bsk-(?:(?:proj|svcacct|admin)-[0-9A-Za-z_-]{40,}|[0-9A-Za-z]{20}T3BlbkFJ[0-9A-Za-z]{20})",
        &["t3blbkfj", "sk-proj-", "sk-svcacct-", "sk-admin-"],
    ),
    rule(
        "anthropic-api-key",
        "an Anthropic API key",
        r"\bsk-ant-[a-z]{3,6}\d{0,3}-[0-9A-Za-z_-]{40,}",
        &["sk-ant-"],
    ),
    rule(
        "huggingface-token",
        "a Hugging Face access token",
        r"\bhf_[A-Za-z]{34}\b",
        &["hf_"],
    ),
    rule(
        "groq-api-key",
        "a Groq API key",
        r"\bgsk_[0-9A-Za-z]{52}\b",
        &["gsk_"],
    ),
    // --- Messaging and SaaS --------------------------------------------------------------
    rule(
        "slack-token",
        "a Slack token",
        r"\bxox[abeoprs]-[0-9]{6,}-[0-9A-Za-z-]{10,}",
        &[
            "xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-",
        ],
    ),
    rule(
        "slack-app-token",
        "a Slack app-level token",
        r"(?i)\bxapp-\d-[A-Z0-9]{9,}-\d+-[a-z0-9]{20,}",
        &["xapp-"],
    ),
    rule(
        "slack-webhook-url",
        "a Slack incoming-webhook URL",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
        &["hooks.slack.com"],
    ),
    rule(
        "discord-webhook-url",
        "a Discord webhook URL",
        r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}",
        &["discord.com/api/webhooks", "discordapp.com/api/webhooks"],
    ),
    Rule {
        group: 1,
        min_entropy: 3.5,
        ..rule(
            "discord-bot-token",
            "a Discord bot token",
            r"(?i)discord.{0,40}?\b([A-Za-z0-9_-]{24,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})\b",
            &["discord"],
        )
    },
    rule(
        "telegram-bot-token",
        "a Telegram bot token",
        r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?:[^0-9A-Za-z_-]|$)",
        &[":aa"],
    ),
    rule(
        "stripe-secret-key",
        "a live Stripe secret or restricted key",
        r"\b(?:sk|rk)_(?:live|prod)_[0-9A-Za-z]{20,}",
        &["sk_live_", "rk_live_", "sk_prod_", "rk_prod_"],
    ),
    rule(
        "stripe-webhook-secret",
        "a Stripe webhook signing secret",
        r"\bwhsec_[0-9A-Za-z]{32,}",
        &["whsec_"],
    ),
    Rule {
        min_entropy: 3.0,
        ..rule(
            "twilio-api-key",
            "a Twilio API key",
            r"\bSK[0-9a-fA-F]{32}\b",
            &["sk"],
        )
    },
    rule(
        "sendgrid-api-key",
        "a SendGrid API key",
        r"\bSG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}(?:[^0-9A-Za-z_-]|$)",
        &["sg."],
    ),
    Rule {
        min_entropy: 3.0,
        ..rule(
            "mailgun-api-key",
            "a Mailgun API key",
            r"\b(?:key|pubkey)-[0-9a-f]{32}\b",
            &["key-"],
        )
    },
    rule(
        "shopify-token",
        "a Shopify access token or shared secret",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
    ),
    rule(
        "postman-api-key",
        "a Postman API key",
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        &["pmak-"],
    ),
    rule(
        "new-relic-key",
        "a New Relic key",
        r"\bNR(?:AK|AA|II)-[A-Za-z0-9]{27}\b",
        &["nrak-", "nraa-", "nrii-"],
    ),
    rule(
        "linear-api-key",
        "a Linear API key",
        r"\blin_api_[A-Za-z0-9]{40}\b",
        &["lin_api_"],
    ),
    rule(
        "square-token",
        "a Square access token or secret",
        // `EAAA...` alone is too common inside base64, so that form needs "square" nearby.
        r"\b(?:sq0atp|sq0csp)-[0-9A-Za-z_-]{22,}|(?i:square).{0,40}?\bEAAA[0-9A-Za-z_-]{60}(?:[^0-9A-Za-z_-]|$)",
        &["sq0atp-", "sq0csp-", "square"],
    ),
    rule(
        "jwt",
        "a JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        &["eyj"],
    ),
    // --- Guesses from context ------------------------------------------------------------
    Rule {
        check: Check::UrlPassword,
        group: 1,
        ..rule(
            "connection-string-password",
            "a connection string with a password",
            r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|jdbc:[a-z]+)://[^:@/\s]*:([^@/\s]+)@",
            &[
                "postgres",
                "mysql",
                "mariadb",
                "mongodb",
                "redis",
                "amqp",
                "mssql",
                "sqlserver",
                "jdbc:",
            ],
        )
    },
    Rule {
        check: Check::Assignment,
        ..rule(
            "generic-secret-assignment",
            "a high-entropy value assigned to a secret-looking name",
            r#"(?i)([a-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|client[_-]?secret|credential)[a-z0-9_.-]*)["']?[ \t]*(?::=|=>|=|:)[ \t]*(?:"([^"\s]{16,200})"|'([^'\s]{16,200})'|`([^`\s]{16,200})`|([^\s"'`,;]{16,200}))"#,
            &[
                "password",
                "passwd",
                "passphrase",
                "secret",
                "token",
                "api_key",
                "api-key",
                "apikey",
                "access_key",
                "access-key",
                "accesskey",
                "auth_key",
                "authkey",
                "private_key",
                "privatekey",
                "credential",
            ],
        )
    },
];
