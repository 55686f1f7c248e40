//! The one secret filter every memory write and every prompt to a hosted model passes through
//! (SPEC "One memory, not three": one secret filter).
//!
//! [`redact`] finds credentials in free text and replaces each with [`REDACTED`], keeping the
//! text around it, so `push with https://bob:hunter2@git.example.com` is kept as
//! `push with https://bob:[REDACTED]@git.example.com`. What it finds:
//!
//! - provider keys and tokens by their documented shapes: AWS access key ids, GitHub, GitLab,
//!   OpenAI, Anthropic, Google (API keys, OAuth client secrets and access tokens), Slack (tokens
//!   and webhook URLs), Stripe, npm, PyPI, Hugging Face, SendGrid, DigitalOcean, Shopify, Twilio,
//!   Telegram bot tokens;
//! - private-key blocks (`-----BEGIN ... PRIVATE KEY-----` to its `END` line, or to the end of
//!   the text when the block was cut);
//! - JSON Web Tokens (`eyJ...` header, payload, signature);
//! - the password of `user:password@` in any URL;
//! - `Authorization: Bearer ...` / `Basic ...` credentials;
//! - values assigned to secret-named keys (`DB_PASSWORD=...`, `api_key: "..."`, `token=...` in a
//!   query string) and "the password is ..." in prose;
//! - high-entropy, credential-shaped strings (long runs mixing upper case, lower case and digits
//!   with many class changes, unlike identifiers, paths, hashes or UUIDs).
//!
//! Kept on purpose: variable names (`OPENAI_API_KEY`), references to where a secret lives
//! (`$TOKEN`, `${DB_PASSWORD}`, `process.env.KEY`, `<your-key>`), already redacted text, git
//! commit hashes and other all-hex digests, UUIDs.
//!
//! Pure functions: no I/O. Linear-time regexes (the `regex` crate), so any input is safe.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// The marker that replaces each secret found.
pub const REDACTED: &str = "[REDACTED]";

/// What kind of secret was found. `Display` gives a short kebab-case name (`github-token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SecretKind {
    /// `-----BEGIN ... PRIVATE KEY-----` blocks (RSA, EC, OpenSSH, PGP, PKCS#8...).
    PrivateKey,
    /// AWS access key ids (`AKIA...`, `ASIA...`).
    AwsAccessKey,
    /// GitHub personal, OAuth, app and refresh tokens (`ghp_`, `github_pat_`...).
    GithubToken,
    /// GitLab tokens (`glpat-`...).
    GitlabToken,
    /// Anthropic API keys (`sk-ant-`).
    AnthropicKey,
    /// OpenAI API keys (`sk-`, `sk-proj-`...).
    OpenaiKey,
    /// Google API keys (`AIza`), OAuth client secrets (`GOCSPX-`), access tokens (`ya29.`).
    GoogleKey,
    /// Slack tokens (`xoxb-`...) and incoming-webhook URLs.
    SlackToken,
    /// Stripe secret and restricted keys, webhook secrets.
    StripeKey,
    /// Other providers with a documented token shape (npm, PyPI, Hugging Face, SendGrid,
    /// DigitalOcean, Shopify, Twilio, Telegram).
    ProviderToken,
    /// A JSON Web Token.
    Jwt,
    /// The password of `user:password@host` in a URL.
    UrlPassword,
    /// An `Authorization: Bearer` / `Basic` credential.
    AuthHeader,
    /// A password given to a command on its command line (`curl -u user:pw`, `mysql -pPW`,
    /// `sshpass -p PW`, `docker login -p PW`, `--password PW`).
    CliPassword,
    /// A value assigned to a secret-named key (`password=`, `api_key:`, `token=`...).
    Assignment,
    /// A long random-looking string shaped like a credential.
    HighEntropy,
}

impl SecretKind {
    /// The short kebab-case name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::PrivateKey => "private-key",
            Self::AwsAccessKey => "aws-access-key",
            Self::GithubToken => "github-token",
            Self::GitlabToken => "gitlab-token",
            Self::AnthropicKey => "anthropic-key",
            Self::OpenaiKey => "openai-key",
            Self::GoogleKey => "google-key",
            Self::SlackToken => "slack-token",
            Self::StripeKey => "stripe-key",
            Self::ProviderToken => "provider-token",
            Self::Jwt => "jwt",
            Self::UrlPassword => "url-password",
            Self::AuthHeader => "auth-header",
            Self::CliPassword => "cli-password",
            Self::Assignment => "secret-assignment",
            Self::HighEntropy => "high-entropy-string",
        }
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of [`redact`]: the text with every secret replaced by [`REDACTED`], and what was
/// found, in order of position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text, secrets replaced.
    pub text: String,
    /// One kind per secret withheld, in the order they appeared.
    pub found: Vec<SecretKind>,
}

impl Redacted {
    /// How many secrets were withheld.
    pub fn withheld(&self) -> usize {
        self.found.len()
    }
}

/// Replaces every secret in `text` with [`REDACTED`] and says what was found; control
/// characters and escape sequences are stripped first ([`strip_controls`]), so what is stored
/// or sent never holds them and a secret split by an escape sequence is still found.
///
/// Idempotent: redacting the output again finds nothing. Cost is linear in the length of `text`.
pub fn redact(text: &str) -> Redacted {
    let text = &*strip_controls(text);
    let spans = find(text);
    if spans.is_empty() {
        return Redacted {
            text: text.to_owned(),
            found: Vec::new(),
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut found = Vec::with_capacity(spans.len());
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str(REDACTED);
        at = span.end;
        found.push(span.kind);
    }
    out.push_str(&text[at..]);
    Redacted { text: out, found }
}

/// Whether `text` holds at least one secret [`redact`] would withhold.
pub fn contains_secret(text: &str) -> bool {
    !find(&strip_controls(text)).is_empty()
}

/// `text` without the characters that could drive a terminal or reorder text when it is shown
/// again (issue 27 item 14): whole escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL` or
/// `… ESC \`, DCS/SOS/PM/APC strings, two- and three-byte escapes, and their C1 forms
/// U+009B / U+009D / U+0090…), every other C0 and C1 control, DEL, and the Unicode bidi
/// controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), the line and paragraph
/// separators and the invisible characters of [`crate::terminal::is_unsafe_char`] (U+2028,
/// U+2029, U+200B, U+FEFF, U+2060–U+2064, U+180E). Kept: `\n`, `\t`, and
/// `\r` when it ends a line (`\r\n`). Borrowed when there was nothing to strip.
///
/// An unterminated string sequence (an OSC without its BEL) ends at the next control
/// character, so a stray `ESC ]` never swallows the lines after it. Linear in `text`.
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    let strip = |c: char| c != '\n' && c != '\t' && c != '\r' && crate::terminal::is_unsafe_char(c);
    let lone_cr = text
        .match_indices('\r')
        .any(|(i, _)| !text[i..].starts_with("\r\n"));
    if !lone_cr && !text.contains(strip) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // What follows the introducer: a control sequence or a string.
        let kind = match c {
            '\u{1b}' => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    Some(Seq::Csi)
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    Some(Seq::Str)
                }
                Some(n @ ' '..='~') => {
                    chars.next();
                    // `ESC ( B` and the like: intermediates, then one final byte.
                    if (' '..='/').contains(&n) {
                        while chars.peek().is_some_and(|c| (' '..='/').contains(c)) {
                            chars.next();
                        }
                        if chars.peek().is_some_and(|c| ('0'..='~').contains(c)) {
                            chars.next();
                        }
                    }
                    None
                }
                _ => None,
            },
            '\u{9b}' => Some(Seq::Csi),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => Some(Seq::Str),
            '\r' if chars.peek() == Some(&'\n') => {
                out.push(c);
                continue;
            }
            '\r' => continue,
            c if strip(c) => continue,
            c => {
                out.push(c);
                continue;
            }
        };
        match kind {
            Some(Seq::Csi) => {
                // Parameter and intermediate bytes, then the final byte.
                while chars
                    .peek()
                    .is_some_and(|c| ('0'..='?').contains(c) || (' '..='/').contains(c))
                {
                    chars.next();
                }
                if chars.peek().is_some_and(|c| ('@'..='~').contains(c)) {
                    chars.next();
                }
            }
            Some(Seq::Str) => {
                // To BEL, ST (`ESC \\` or U+009C), or the next other control, which is then
                // handled as usual (a newline is kept).
                while let Some(&n) = chars.peek() {
                    if n == '\u{7}' || n == '\u{9c}' {
                        chars.next();
                        break;
                    }
                    if n == '\u{1b}' {
                        // `ESC \\` ends it; any other escape starts the next sequence.
                        let mut ahead = chars.clone();
                        ahead.next();
                        if ahead.next() == Some('\\') {
                            chars.next();
                            chars.next();
                        }
                        break;
                    }
                    if n.is_control() {
                        break;
                    }
                    chars.next();
                }
            }
            None => {}
        }
    }
    Cow::Owned(out)
}

#[derive(Clone, Copy)]
enum Seq {
    Csi,
    Str,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: SecretKind,
}

/// A rule: a regex, the kind it finds, and which capture group is the secret (0 = all of it).
struct Rule {
    kind: SecretKind,
    regex: Regex,
    group: usize,
    /// A check on the captured text; the match is dropped when it says no.
    accept: fn(&str) -> bool,
}

fn always(_: &str) -> bool {
    true
}

fn rule(kind: SecretKind, pattern: &str, group: usize, accept: fn(&str) -> bool) -> Option<Rule> {
    // Every pattern is a constant checked by the tests; a failure here would drop one rule, never
    // panic.
    Regex::new(pattern).ok().map(|regex| Rule {
        kind,
        regex,
        group,
        accept,
    })
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    use SecretKind::*;
    [
        // A whole private-key block, or from its BEGIN line to the end when it was cut.
        rule(
            PrivateKey,
            r"(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            0,
            always,
        ),
        rule(
            AnthropicKey,
            r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{20,}",
            0,
            always,
        ),
        rule(
            OpenaiKey,
            r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
            0,
            has_letter_and_digit,
        ),
        rule(AwsAccessKey, r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b", 0, always),
        rule(
            GithubToken,
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})",
            0,
            always,
        ),
        rule(
            GitlabToken,
            r"\bgl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat|wt|agent)-[A-Za-z0-9_\-]{20,}",
            0,
            always,
        ),
        rule(
            GoogleKey,
            r"\b(?:AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{24,}|ya29\.[0-9A-Za-z_\-]{20,})",
            0,
            always,
        ),
        rule(
            SlackToken,
            r"(?:\bxox[abposre]-[0-9A-Za-z\-]{10,}|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,})",
            0,
            always,
        ),
        rule(
            StripeKey,
            r"\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})",
            0,
            always,
        ),
        rule(
            ProviderToken,
            concat!(
                r"\b(?:npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_\-]{50,}|hf_[A-Za-z0-9]{30,}",
                r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{30,}|do[por]_v1_[a-f0-9]{64}",
                r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|SK[0-9a-f]{32}\b|\d{8,10}:AA[A-Za-z0-9_\-]{33})"
            ),
            0,
            always,
        ),
        rule(
            Jwt,
            r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
            0,
            always,
        ),
        // user:password@host in any URL; only the password is withheld.
        rule(
            UrlPassword,
            // The password runs to the last `@` before the host (an unencoded `@` in it, as in
            // `mongodb+srv://admin:p@ssw0rd@host`); the user may be empty (`redis://:pw@host`).
            r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:([^\s/]+)@[^\s/@:]+",
            1,
            not_placeholder,
        ),
        // Credentials on the command line: `curl -u user:pw`, `--user user:pw`.
        rule(
            CliPassword,
            r#"(?:^|[\s;|&(])(?:-u|--user)(?:\s+|=)["']?[^\s:"']+:([^\s"']+)"#,
            1,
            not_placeholder,
        ),
        // `mysql -pPW` (the password glued to `-p`), `sshpass -p PW`, `docker login -p PW`,
        // `--password PW` / `--password=PW` of any tool.
        rule(
            CliPassword,
            r#"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p([^\s"'-][^\s"']*)"#,
            1,
            not_placeholder,
        ),
        rule(
            CliPassword,
            r#"\b(?:sshpass\s+-p|(?:docker|podman|helm)\s+(?:registry\s+)?login\b[^\n|;&]*?\s(?:-p|--password))\s*["']?([^\s"']+)"#,
            1,
            not_placeholder,
        ),
        rule(
            CliPassword,
            r#"(?:^|\s)--password=["']?([^\s"'-][^\s"']*)"#,
            1,
            not_placeholder,
        ),
        // `--password PW` after a space could be prose ("the --password flag"): a value with a
        // digit or a symbol only.
        rule(
            CliPassword,
            r#"(?:^|\s)--password\s+["']?([^\s"'-][^\s"']*)"#,
            1,
            prose_secret,
        ),
        // An environment or config key in capitals (`DB_PASSWORD=letmein`,
        // `MYSQL_ROOT_PASSWORD: rootpassword`, `APP_SIGNING_KEY=…`) holds a literal: withheld
        // whatever its shape.
        rule(
            Assignment,
            concat!(
                r#"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY|CREDENTIALS?|AUTH)[A-Z0-9_]*"#,
                r#"["']?[ \t]*(?:=|:[ \t])[ \t]*(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'&,;<>)\]}]+))"#
            ),
            usize::MAX,
            literal_secret,
        ),
        // A quoted key and a quoted value (`{"password": "…"}`, `'api_key': '…'`), or a quoted
        // value after `=` or `:` (`api_key: '…'` in YAML): a literal as well.
        rule(
            Assignment,
            concat!(
                r#"(?i)(?:["'][A-Za-z0-9_.\-]*(?:password|passwd|pass|pwd|secret|token|api[_\-]?key|apikey|private[_\-]?key|signing[_\-]?key|credentials?)["']\s*:\s*|"#,
                r#"\b[A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|private[_\-]?key|signing[_\-]?key)\s*[:=]\s*)"#,
                r#"(?:"([^"\n]+)"|'([^'\n]+)')"#
            ),
            usize::MAX,
            literal_secret,
        ),
        // A bare value assigned to a key whose name ends in a password word (`db_password =
        // letmein`, `password: hunter`, `dbPassword=...`, `pwd=...`): a literal whatever its
        // shape, unless it is code, a reference or the first word of prose
        // ([`password_value`]). `password_length = 12` (another suffix) is judged below.
        rule(
            Assignment,
            concat!(
                r#"(?i)(?:^|[^A-Za-z0-9_.\-])["']?[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd)["']?"#,
                r#"[ \t]*(?::=|=>|[:=])[ \t]*([^\s"'`&,;<>)\]}#]+)"#
            ),
            1,
            password_value,
        ),
        // The same for a key whose name ends in `pass` as a part of its own (`pass:`,
        // `db_pass =`, `smtp-pass:`; not `bypass`); a bare number there is a count.
        rule(
            Assignment,
            concat!(
                r#"(?i)(?:^|[^A-Za-z0-9_.\-])["']?(?:[A-Za-z0-9.\-]*[_.\-])?pass["']?"#,
                r#"[ \t]*(?::=|=>|[:=])[ \t]*([^\s"'`&,;<>)\]}#]+)"#
            ),
            1,
            pass_value,
        ),
        // Chinese key forms (`密码：opensesame`, `口令=...`, `令牌: ...`): the ASCII value after the
        // key and its colon or `=` is a literal whatever its shape.
        rule(
            Assignment,
            r#"(?:密码|口令|密钥|秘钥|令牌)[ \t]*[:：=][ \t]*["'“]?([!-~&&[^"'”，。；]]+)"#,
            1,
            password_value,
        ),
        rule(
            AuthHeader,
            r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9_\-.~+/]{16,}=*)",
            1,
            credential_like,
        ),
        // KEY = value, KEY: "value", ?token=value. The key may be part of a longer identifier
        // (DB_PASSWORD, githubToken). A quoted value may hold spaces.
        rule(
            Assignment,
            concat!(
                r#"(?i)[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|private[_\-]?key|signing[_\-]?key|credentials?)[A-Za-z0-9_\-]*"#,
                r#"["']?\s*(?::=|=>|[:=])\s*(?:"([^"\n]{4,})"|'([^'\n]{4,})'|([^\s"'&,;<>)\]}]{4,}))"#
            ),
            usize::MAX,
            assigned_secret,
        ),
        // "the password is hunter2", "password was s3cr3t!"
        rule(
            Assignment,
            r#"(?i)(?:\b(?:password|passwd|passphrase|passcode|pw|pwd|pin|secret|token|api key|(?:the|my|db|admin|root|wifi|user)\s+pass)(?:\s+(?:for|of|on|to)(?:\s+[\w.@-]+){1,4}?)?(?:\s+(?:is|was|=)\s+|'s\s+)|(?:密码|口令|令牌|密钥|秘钥)(?:\s*(?:是|为|[:：=])\s*|\s+))["'`“]?([^\s"'`”，。；]{4,})"#,
            1,
            prose_secret,
        ),
        // "the AES key for the export files is 3f7a9c…", "token 是 tkn_8Hq2Zx5Lm9Vt", "盐值是
        // q8Zr3Lm+Vx7Np/2Kc9Tw4Yh1=": a key word, what it is for (up to four words), then the
        // value; only a random-looking one ([`named_key_value`]), so "the sort key is
        // created_at" or "the cache key is user:42" stay.
        rule(
            Assignment,
            r#"(?i)(?:\b(?:key|salt|secret|token|iv|nonce|passphrase|credential|hmac)\b(?:\s+(?:for|of|to|on|in)(?:\s+[\w.@/-]+){1,4}?)?|盐值|盐|私钥|密钥|秘钥|令牌)\s*(?:is|was|=|:|是|为|：)\s*["'`“]?([A-Za-z0-9+/=_\-.~]{12,})"#,
            1,
            named_key_value,
        ),
        // "creds are admin/Adm1n2024!", "login with admin:admin123", "basic auth is
        // ops:Sup3rS3cret", "the login for jenkins is deploy / J3nk!ns_pw": a user and a
        // password after a word for credentials; the password is withheld ([`pair_password`]).
        rule(
            Assignment,
            r#"(?i)(?:\b(?:creds?|credentials|login|log\s?in|account|basic\s+auth|auth)\b|登录|登陆|账号|帐号|凭证|认证)(?:\s+(?:for|on|to|of)(?:\s+[\w.@-]+){1,4}?)?\s*(?:is|are|=|:|：|with|as|用|是)?\s*(?:basic\s+|user\s+)?["'`]?[\w.@+-]{2,40}["'`]?\s*[/:]\s*["'`]?([^\s"'`,;，。]{4,})"#,
            1,
            pair_password,
        ),
        // "user app_rw, password Vq7!rT2#mLx9", "login admin / pw hunter2!": a password word
        // right before a value with no "is" or `=` between: a literal only when it looks like
        // one ([`bare_prose_password`]), so "password reset" or "password field" are prose.
        rule(
            Assignment,
            r#"(?i)\b(?:password|passwd|passphrase|passcode|pw|pwd)\s+["'`]?([^\s"'`，。；]{6,})"#,
            1,
            bare_prose_password,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

static CANDIDATE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-.~]{24,}=*").ok());

fn find(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for rule in RULES.iter() {
        for caps in rule.regex.captures_iter(text) {
            let m = if rule.group == usize::MAX {
                // The first value group that matched (double-quoted, single-quoted, bare).
                (1..caps.len()).find_map(|g| caps.get(g))
            } else {
                caps.get(rule.group)
            };
            let Some(m) = m else { continue };
            // A bare value at the end of a sentence keeps the sentence's full stop or comma.
            let value = if rule.kind == SecretKind::Assignment && !quoted(text, m.end()) {
                m.as_str().trim_end_matches(['.', ',', ';', ':'])
            } else {
                m.as_str()
            };
            if value.contains(REDACTED) || !(rule.accept)(value) {
                continue;
            }
            spans.push(Span {
                start: m.start(),
                end: m.start() + value.len(),
                kind: rule.kind,
            });
        }
    }
    if let Some(candidate) = CANDIDATE.as_ref() {
        for m in candidate.find_iter(text) {
            let (start, s) = trim_candidate(m.start(), m.as_str());
            // Ids in a URL's path (a channel, a document) and hashed file names are public;
            // secrets in URLs are found by the userinfo and query-string rules above.
            if in_url(text, start) || has_file_extension(s) {
                continue;
            }
            if looks_random(s) {
                spans.push(Span {
                    start,
                    end: start + s.len(),
                    kind: SecretKind::HighEntropy,
                });
            }
        }
    }
    merge(spans)
}

/// Whether the whitespace-delimited word around byte `at` is a URL (holds `://`).
fn in_url(text: &str, at: usize) -> bool {
    let word_start = text[..at].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word_end = text[at..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| at + i);
    text[word_start..word_end].contains("://")
}

/// `name.ext` with a short lower-case extension: a (possibly content-hashed) file name.
fn has_file_extension(s: &str) -> bool {
    s.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && ext.bytes().any(|b| b.is_ascii_lowercase())
    })
}

/// Whether the byte at `end` closes a quoted value.
fn quoted(text: &str, end: usize) -> bool {
    matches!(text.as_bytes().get(end), Some(b'"' | b'\''))
}

/// Sorts spans and merges overlapping ones; the earliest-starting (then longest) kind wins.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    // A named rule says more than the entropy check: it sorts first on equal spans.
    let generic = |s: &Span| s.kind == SecretKind::HighEntropy;
    spans.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(generic(a).cmp(&generic(b)))
    });
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start < last.end => {
                last.end = last.end.max(span.end);
                if generic(last) && !generic(&span) {
                    last.kind = span.kind;
                }
            }
            _ => out.push(span),
        }
    }
    out
}

/// Drops the punctuation a sentence puts around a word (`.`, `=`, `-` at either end).
fn trim_candidate(start: usize, s: &str) -> (usize, &str) {
    let trimmed_start = s.trim_start_matches(['.', '=', '-', '/', '~']);
    let lead = s.len() - trimmed_start.len();
    let t = trimmed_start.trim_end_matches(['.', '-', '/', '~']);
    (start + lead, t)
}

fn has_letter_and_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A value that names where a secret lives rather than holding it: `$VAR`, `${VAR}`, `%VAR%`,
/// `<your-key>`, `***`, `xxxx`, `...`, `env:...`, `process.env.X`, `os.environ[...]`.
fn is_placeholder(s: &str) -> bool {
    let v = s.trim_matches(|c: char| c == '"' || c == '\'' || c == '`');
    let lower = v.to_ascii_lowercase();
    v.is_empty()
        || v.contains(REDACTED)
        || v.starts_with('$')
        || v.starts_with('%')
        || v.starts_with('<')
        || v.starts_with('{')
        || v.starts_with('[')
        || v.chars()
            .all(|c| matches!(c, '*' | '.' | 'x' | 'X' | '•' | '#' | '?' | '-'))
        || lower.starts_with("env:")
        || lower.starts_with("process.env")
        || lower.starts_with("os.environ")
        || lower.starts_with("os.getenv")
        || lower.starts_with("std::env")
        || lower.starts_with("env.")
        || lower.starts_with("secrets.")
        || lower.starts_with("vault:")
        || lower.starts_with("op://")
        || lower.contains("your")
        || lower.contains("changeme") && v.len() < 10
        || lower.starts_with("example")
        || lower.starts_with("placeholder")
        || lower.starts_with("redacted")
}

fn not_placeholder(s: &str) -> bool {
    !is_placeholder(s)
}

/// Words a secret-named key is often set to in code and docs that are not secrets.
const NOT_VALUES: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "string",
    "str",
    "bool",
    "number",
    "optional",
    "required",
    "bytes",
    "secret",
    "password",
    "token",
    "string;",
    "string,",
    "env",
    "file",
    "omitted",
    "hidden",
    "masked",
    "empty",
    "unset",
    "default",
    "self",
    "this",
    "new",
    "function",
    "lambda",
];

fn assigned_secret(value: &str) -> bool {
    let v = value.trim();
    if is_placeholder(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let word = lower.trim_end_matches([',', ';', ')', '.']);
    if NOT_VALUES.contains(&word) {
        return false;
    }
    // A count, a port, a size: short numbers are settings, not credentials.
    if word.len() < 12
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
    {
        return false;
    }
    // A call, a type, a path or a reference to another variable is code, not a literal.
    if v.contains('(') || v.starts_with('/') || v.starts_with("./") || v.starts_with("~/") {
        return false;
    }
    // Prose after a colon ("token: see the vault") has spaces and no digits or symbols.
    if v.contains(' ') {
        return v
            .chars()
            .any(|c| c.is_ascii_digit() || c.is_ascii_punctuation());
    }
    // An identifier-like word (a variable name, a type name) is kept; a literal with digits or
    // symbols, or a long random run, is withheld.
    let has_digit = v.bytes().any(|b| b.is_ascii_digit());
    let has_symbol = v
        .bytes()
        .any(|b| b.is_ascii_punctuation() && b != b'_' && b != b'.');
    has_digit || has_symbol || looks_random(v) || v.len() >= 12 && !is_identifier_like(v)
}

/// The value of a key that holds a literal (quoted, or an environment key in capitals): a
/// secret whatever its shape, unless it names where the secret lives (`$VAR`, `<your-key>`,
/// `***`) or is a boolean or null.
fn literal_secret(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    !is_placeholder(v)
        && !matches!(
            lower.as_str(),
            "true" | "false" | "null" | "none" | "nil" | "undefined" | "yes" | "no" | "on" | "off"
        )
}

/// The value of a password-named key: a secret whatever its shape, except what is code or
/// names where the secret lives: a placeholder ([`is_placeholder`]: `$VAR`, `<password>`,
/// `***`, `changeme`...), a boolean, null or type word ([`NOT_VALUES`]), a call
/// (`get_password()`), a path, a member access (`self.password`, `config.db.pwd`), or another
/// variable of the same name (`user_password`, `dbPassword`).
fn password_value(value: &str) -> bool {
    let v = value.trim();
    if is_placeholder(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let word = lower.trim_end_matches([',', ';', ')', '.']);
    if NOT_VALUES.contains(&word) || matches!(word, "yes" | "no" | "on" | "off" | "str" | "int") {
        return false;
    }
    if v.contains('(') || v.starts_with('/') || v.starts_with("./") || v.starts_with("~/") {
        return false;
    }
    // "password: stored in vault.yml", "Password: see the wiki": prose, not a value.
    if PROSE_WORDS.contains(&word) {
        return false;
    }
    let has_digit = v.bytes().any(|b| b.is_ascii_digit());
    let ident = |seg: &str| {
        seg.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !has_digit && v.contains('.') && v.split('.').all(ident) {
        return false;
    }
    let names_a_secret = ["password", "passwd", "pwd", "pass", "secret"]
        .iter()
        .any(|k| lower.contains(k));
    let inner_upper = v.chars().skip(1).any(|c| c.is_ascii_uppercase());
    if !has_digit && names_a_secret && ident(v) && (v.contains('_') || inner_upper) {
        return false;
    }
    true
}

/// Words that start prose after `password:` ("stored in the vault", "see the wiki").
const PROSE_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "is",
    "are",
    "was",
    "be",
    "in",
    "on",
    "at",
    "of",
    "to",
    "from",
    "via",
    "by",
    "see",
    "ask",
    "use",
    "read",
    "stored",
    "kept",
    "saved",
    "managed",
    "set",
    "sent",
    "given",
    "provided",
    "found",
    "same",
    "not",
    "no",
    "never",
    "your",
    "our",
    "my",
    "their",
    "its",
    "check",
    "look",
    "get",
    "taken",
    "defined",
    "configured",
    "loaded",
    "rotated",
    "changed",
    "reset",
    "held",
    "under",
    "per",
    "generated",
    "random",
    "unchanged",
    "prompted",
    "asked",
    "entered",
    "typed",
    "supplied",
    "passed",
    "injected",
    "mounted",
    "like",
    "as",
    "and",
    "or",
    "if",
    "when",
    "then",
    "for",
    "with",
    "without",
];

/// [`password_value`], and a bare number is a count (`max_pass = 3`), not a password.
fn pass_value(value: &str) -> bool {
    !value.trim().bytes().all(|b| b.is_ascii_digit()) && password_value(value)
}

fn prose_secret(value: &str) -> bool {
    let v = value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    // "the version pin for react is 18.2.0", "alpine:3.19": a version, not a secret.
    static VERSION: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^([A-Za-z][\w.-]*[:@])?v?\d+(\.\d+)+([-+][\w.]+)?$").ok());
    if VERSION.as_ref().is_some_and(|r| r.is_match(v)) {
        return false;
    }
    // `password = get_password()`, `= self.password`: code, not a literal.
    password_value(v)
        && v.len() >= 4
        && (v.bytes().any(|b| b.is_ascii_digit())
            || v.bytes()
                .any(|b| b.is_ascii_punctuation() && b != b'-' && b != b'_'))
}

/// The password of a user/password pair (see the rule): a literal with a digit or a sign
/// ([`prose_secret`]) shaped like a password (a sign, three classes, or a word and three
/// digits), not an account id (`us-east-1:123456789012`), a region, a version, a path, a file
/// name or a URL ("login: src/pages/login.tsx").
fn pair_password(value: &str) -> bool {
    let v = value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    if !prose_secret(value) || v.contains('/') || v.contains("://") || has_file_extension(v) {
        return false;
    }
    let upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    let letters = v.bytes().filter(u8::is_ascii_alphabetic).count();
    // A sign a name does not use (`Adm1n2024!`, `J3nk!ns_pw`), or three classes
    // (`Sup3rS3cret`), or a word then three digits (`admin123`); never a region, a team or a
    // version (`eu-west-1`, `team-42`, `RS256`, `oauth2`, `30:15`).
    let sign = v
        .bytes()
        .any(|b| b.is_ascii_punctuation() && !matches!(b, b'-' | b'_' | b'.' | b':'));
    (sign && (lower || upper))
        || (upper && lower && digits > 0)
        || (lower && !upper && letters >= 4 && digits >= 3 && !v.contains('-'))
}

/// A value named as a key, salt or token (see the rule), 12 characters or more and no
/// placeholder, URL or path: hex of 16 or more (the sentence names it a key), or upper case,
/// lower case and digits changing places four times or more, as random keys and base64 do
/// (`tkn_8Hq2Zx5Lm9Vt`); versions, dates, paths and snake_case names with numbers
/// (`node-modules-v18.17.1-linux`, `ts_2024q1_v3_shard7`, `created_at`) are not.
fn named_key_value(value: &str) -> bool {
    let v = value.trim_end_matches(['.', ',', ';', ':']);
    if v.len() < 12 || is_placeholder(v) || v.contains("://") || v.starts_with(['/', '.', '~']) {
        return false;
    }
    // A hex key or digest named as a key ("the AES key … is 3f7a9c…").
    let hex = v.len() >= 16 && v.bytes().all(|b| b.is_ascii_hexdigit()) && has_letter_and_digit(v);
    // Otherwise random in three classes (`tkn_8Hq2Zx5Lm9Vt`, base64 `q8Zr3Lm+Vx7Np/2Kc9…=`):
    // versions, dates, paths and snake_case names with numbers (`node-modules-v18.17.1-linux`,
    // `reports/2024/q1/summary`, `ts_2024q1_v3_shard7`) have no upper case or change class
    // rarely.
    let upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let digit = v.bytes().any(|b| b.is_ascii_digit());
    let path_like = v.contains('/') && !v.contains(['+', '=']);
    hex || (upper
        && lower
        && digit
        && letter_digit_changes(v) >= 4
        && !is_identifier_like(v)
        && !path_like
        && !has_file_extension(v))
}

/// A value right after a password word with nothing between (see the rule): three of lower
/// case, upper case, digits and signs with a sign or letters and digits mixed twice
/// (`Vq7!rT2#mLx9`, `hunter2!`), letters and digits changing places three times (`pa55w0rd`),
/// or ten letters and digits with two digits (`stagingpass2024`); never a name with a hyphen,
/// dot or version (`SHA-256`, `reset-v2`, `Manager2`), an English word, a placeholder or code
/// ([`password_value`]).
fn bare_prose_password(value: &str) -> bool {
    let v = value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    if !password_value(v) || v.len() < 6 {
        return false;
    }
    // Punctuation that names use ("SHA-256", "reset-v2", "v2.3.1") is no sign of a password.
    let classes = [
        v.bytes().any(|b| b.is_ascii_lowercase()),
        v.bytes().any(|b| b.is_ascii_uppercase()),
        v.bytes().any(|b| b.is_ascii_digit()),
        v.bytes()
            .any(|b| b.is_ascii_punctuation() && !matches!(b, b'-' | b'_' | b'.' | b'/')),
    ]
    .iter()
    .filter(|&&c| c)
    .count();
    // Letters and digits changing places ("pa55w0rd"), punctuation aside.
    let alnum: String = v.chars().filter(char::is_ascii_alphanumeric).collect();
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    let lettered_digits = has_letter_and_digit(&alnum)
        && (letter_digit_changes(&alnum) >= 3
            || (v.len() >= 10 && digits >= 2 && alnum.len() == v.len()));
    // Three classes with a sign or letters and digits mixed twice: "Manager2" is a name.
    let mixed = classes >= 3
        && (v
            .bytes()
            .any(|b| b.is_ascii_punctuation() && !matches!(b, b'-' | b'_' | b'.' | b'/'))
            || letter_digit_changes(&alnum) >= 2);
    mixed || lettered_digits
}

/// How often `s` changes between letters and digits.
fn letter_digit_changes(s: &str) -> usize {
    s.as_bytes()
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count()
}

fn credential_like(s: &str) -> bool {
    !is_placeholder(s) && has_letter_and_digit(s) && !is_identifier_like(s)
}

/// snake_case / kebab-case / camelCase words: few changes between letter case and digits.
fn is_identifier_like(s: &str) -> bool {
    class_changes(s) * 5 < s.len()
}

fn class_of(c: char) -> u8 {
    if c.is_ascii_lowercase() {
        0
    } else if c.is_ascii_uppercase() {
        1
    } else if c.is_ascii_digit() {
        2
    } else {
        3
    }
}

fn class_changes(s: &str) -> usize {
    let mut changes = 0;
    let mut prev = None;
    for c in s.chars() {
        let class = class_of(c);
        if prev.is_some_and(|p| p != class) {
            changes += 1;
        }
        prev = Some(class);
    }
    changes
}

/// Shannon entropy of the characters of `s`, in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 128];
    let mut n = 0u32;
    for b in s.bytes() {
        counts[usize::from(b & 0x7f)] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = f64::from(n);
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A credential-shaped random string: ≥ 24 characters, upper and lower case letters and at least
/// two digits, high entropy, and many changes between character classes (identifiers and paths
/// change class rarely). All-hex strings (commit hashes, digests) and UUIDs are not credentials.
fn looks_random(s: &str) -> bool {
    if s.len() < 24 || s.contains(REDACTED) {
        return false;
    }
    let is_hex = |c: char| c.is_ascii_hexdigit() || c == '-';
    if s.chars().all(is_hex) {
        return false;
    }
    // A dotted name: judge each part on its own.
    if s.contains('.') {
        return s.split('.').any(looks_random);
    }
    // A path is made of identifier-like segments; base64 (an AWS secret key) has '/' too.
    if s.contains('/') {
        let path_like = s
            .split('/')
            .all(|seg| seg.len() < 3 || is_identifier_like(seg));
        return s.split('/').any(looks_random) || !path_like && random_run(s);
    }
    random_run(s)
}

/// The statistical half of [`looks_random`], on a run without dots.
fn random_run(s: &str) -> bool {
    let upper = s.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = s.bytes().filter(u8::is_ascii_lowercase).count();
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    if upper == 0 || lower == 0 || digits < 2 {
        return false;
    }
    // A random base62 string changes class at about 60 % of positions; an identifier at < 20 %.
    let changes = class_changes(s);
    changes * 100 >= s.len() * 35 && entropy(s) >= 3.8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<SecretKind> {
        redact(text).found
    }

    /// Issue 27 item 14: every class of control is stripped, whole sequences at once.
    #[test]
    fn control_characters_and_escape_sequences_are_stripped() {
        let cases = [
            // CSI: clear screen, SGR colours, cursor moves, private modes.
            ("a\u{1b}[2Jb", "ab"),
            ("\u{1b}[1;31mred\u{1b}[0m", "red"),
            ("x\u{1b}[10;20Hy\u{1b}[?25l", "xy"),
            // OSC title / hyperlink, ended by BEL or ST, and a C1 OSC.
            ("\u{1b}]0;pwned\u{7}title", "title"),
            (
                "\u{1b}]8;;http://e.vil\u{1b}\\link\u{1b}]8;;\u{1b}\\",
                "link",
            ),
            ("\u{9d}0;t\u{9c}ok", "ok"),
            // An unterminated OSC stops at the newline; nothing after it is lost.
            ("a\u{1b}]0;title\nnext line", "a\nnext line"),
            // DCS, two- and three-byte escapes, C1 CSI.
            ("\u{1b}Pq#0\u{1b}\\d", "d"),
            ("\u{1b}7s\u{1b}8\u{1b}(Bt", "st"),
            ("\u{9b}2Jz", "z"),
            // Other C0 and C1, DEL, a lone CR; CRLF, LF and TAB kept.
            ("b\u{7}e\u{8}l\u{0}l\u{7f}\u{85}", "bell"),
            ("over\rwrite", "overwrite"),
            ("l1\r\nl2\n\tl3", "l1\r\nl2\n\tl3"),
            // Bidi overrides, embeddings, isolates and marks.
            ("evil\u{202E}txt.exe", "eviltxt.exe"),
            (
                "\u{202A}\u{202B}\u{202C}\u{202D}a\u{2066}\u{2067}\u{2068}\u{2069}\u{200F}",
                "a",
            ),
            ("trailing \u{1b}", "trailing "),
        ];
        for (input, want) in cases {
            assert_eq!(strip_controls(input), want, "{input:?}");
            assert_eq!(redact(input).text, want, "{input:?}");
        }
        let plain = "café e\u{301} 👩\u{200d}💻 记忆 \"q\" [x]";
        assert!(matches!(strip_controls(plain), Cow::Borrowed(_)));
        // A secret split by an escape sequence is found once it is gone.
        let r = redact("token ghp_Xy7Zq3Wv9Ut5\u{1b}[0mSr1Qp8On4Ml6KxYz2Ab4Cd6E here");
        assert_eq!(r.text, "token [REDACTED] here");
    }

    #[test]
    fn every_rule_compiles() {
        assert_eq!(RULES.len(), 28, "a rule failed to compile");
        assert!(CANDIDATE.is_some());
    }

    #[test]
    fn provider_keys_are_withheld_and_the_fact_kept() {
        let cases = [
            (
                "aws key AKIAIOSFODNN7EXAMPLE in ci",
                SecretKind::AwsAccessKey,
            ),
            (
                "use ghp_16C7e42F292c6912E7710c838347Ae178B4a for pushes",
                SecretKind::GithubToken,
            ),
            (
                "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFG",
                SecretKind::GithubToken,
            ),
            (
                "gitlab: glpat-xXk3Zr9bQ2mN7pLw4TyV",
                SecretKind::GitlabToken,
            ),
            (
                "key sk-ant-api03-AbCdEf012345_ghIJkl6789-mnOPqr0123456789abcd here",
                SecretKind::AnthropicKey,
            ),
            (
                "OPENAI_API_KEY is sk-proj-4fGh7Jk9Lm2Np5Qr8St1Vw3Xy6Za",
                SecretKind::OpenaiKey,
            ),
            (
                "maps key AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
                SecretKind::GoogleKey,
            ),
            (
                "bot xoxb-2345678901-2345678901234-AbCdEfGhIjKlMnOpQrStUv",
                SecretKind::SlackToken,
            ),
            (
                "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                SecretKind::StripeKey,
            ),
            (
                "npm_abcdefghijklmnopqrstuvwxyz0123456789 for publish",
                SecretKind::ProviderToken,
            ),
            (
                "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 model",
                SecretKind::ProviderToken,
            ),
        ];
        for (text, kind) in cases {
            let r = redact(text);
            assert_eq!(r.found, vec![kind], "{text}");
            assert!(r.text.contains(REDACTED), "{}", r.text);
            assert_eq!(r.withheld(), 1);
        }
        let r = redact("use ghp_16C7e42F292c6912E7710c838347Ae178B4a for pushes");
        assert_eq!(r.text, "use [REDACTED] for pushes");
    }

    #[test]
    fn every_credential_form_of_the_hostile_test_is_withheld() {
        let cases = [
            (
                "curl -u admin:Sup3rS3cret https://api.example.com",
                "Sup3rS3cret",
            ),
            (
                "curl --user deploy:plainword https://x.example.com",
                "plainword",
            ),
            ("redis://:redispass@cache.internal:6379/0", "redispass"),
            (
                "mongodb+srv://admin:p@ssw0rd@cluster0.example.net/db",
                "p@ssw0rd",
            ),
            ("mysql -uroot -pletmein shop", "letmein"),
            ("sshpass -p hunter two ssh host", "hunter"),
            (
                "docker login -u bot -p dockerpass registry.example.com",
                "dockerpass",
            ),
            (
                "helm registry login ghcr.io --password plainword",
                "plainword",
            ),
            ("vault login --password=plainword", "plainword"),
            ("psql --password s3cret!x", "s3cret!x"),
            ("DB_PASS=hunterxy", "hunterxy"),
            ("DB_PASSWORD=letmein", "letmein"),
            ("POSTGRES_PASSWORD=postgres", "postgres"),
            ("    MYSQL_ROOT_PASSWORD: rootpassword", "rootpassword"),
            (
                r#"{"user": "bob", "password": "correcthorse"}"#,
                "correcthorse",
            ),
            ("APP_SIGNING_KEY=abcdefghijkl", "abcdefghijkl"),
            (
                "curl -H 'X-Auth-Token: 9f86d081884c7d659a2feaa0c55ad015'",
                "9f86d081884c7d659a2feaa0c55ad015",
            ),
            ("数据库密码 hunter22", "hunter22"),
            ("密码：opensesame1", "opensesame1"),
            ("db_password = \"plainword\"", "plainword"),
        ];
        for (text, secret) in cases {
            let r = redact(text);
            assert!(!r.text.contains(secret), "{text} -> {}", r.text);
            assert!(r.withheld() >= 1, "{text}");
        }
    }

    /// The corpus lines of `fixtures/secrets/`: comments and blank lines skipped.
    fn corpus(text: &str) -> impl Iterator<Item = &str> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    }

    /// `fixtures/secrets/positive.txt`: every credential form is withheld (the value is gone),
    /// and redacting again changes nothing.
    #[test]
    fn the_positive_corpus_is_withheld() {
        let text = include_str!("../../../fixtures/secrets/positive.txt");
        let mut n = 0;
        for line in corpus(text) {
            let (input, secret) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("no TAB in corpus line {line:?}"));
            let r = redact(input);
            assert!(!r.text.contains(secret), "{input} -> {}", r.text);
            assert!(r.withheld() >= 1, "{input}");
            assert_eq!(redact(&r.text).text, r.text, "not idempotent: {input}");
            n += 1;
        }
        assert!(n >= 40, "{n} cases");
    }

    /// `fixtures/secrets/safe.txt`: names, references and placeholders are kept as they are.
    #[test]
    fn the_safe_corpus_stays() {
        let text = include_str!("../../../fixtures/secrets/safe.txt");
        for line in corpus(text) {
            let r = redact(line);
            assert_eq!(r.text, line, "{:?}", r.found);
        }
    }

    #[test]
    fn names_and_references_of_credentials_stay() {
        for text in [
            "the password is in vault.yml",
            "set DB_PASSWORD in .env before you start",
            "DB_PASSWORD=$DB_PASSWORD",
            "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}",
            "API_KEY=%API_KEY%",
            "USE_AUTH=true",
            "password: <your password>",
            "curl -u $USER:$TOKEN https://x.example.com",
            "mysql -p shop (it asks for the password)",
            "the --password flag reads from stdin",
            "密码在 vault 里",
        ] {
            let r = redact(text);
            assert_eq!(r.text, text, "{text}");
        }
    }

    #[test]
    fn url_passwords_keep_the_url() {
        let r = redact("remote https://bob:hunter2@git.example.com/team/repo.git");
        assert_eq!(
            r.text,
            "remote https://bob:[REDACTED]@git.example.com/team/repo.git"
        );
        assert_eq!(r.found, vec![SecretKind::UrlPassword]);
        let r =
            redact("clone https://user:ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r");
        assert_eq!(r.text, "clone https://user:[REDACTED]@github.com/o/r");
        let r = redact("postgres://app:s3cr3t-Pa55@db.internal:5432/main");
        assert_eq!(r.text, "postgres://app:[REDACTED]@db.internal:5432/main");
        // A token as the whole user part.
        let r = redact("https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r");
        assert_eq!(r.text, "https://[REDACTED]@github.com/o/r");
        // Placeholders and ports are not passwords.
        assert!(!contains_secret("https://user:${GIT_TOKEN}@github.com/o/r"));
        assert!(!contains_secret(
            "http://localhost:8080/api and git@github.com:o/r.git"
        ));
    }

    #[test]
    fn private_key_blocks_whole_or_cut() {
        let pem = "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----\nlives in vault";
        let r = redact(pem);
        assert_eq!(r.text, "deploy key:\n[REDACTED]\nlives in vault");
        assert_eq!(r.found, vec![SecretKind::PrivateKey]);
        let cut = "key -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7";
        assert_eq!(redact(cut).text, "key [REDACTED]");
    }

    #[test]
    fn jwts_and_auth_headers() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(
            kinds(&format!("session {jwt} expires")),
            vec![SecretKind::Jwt]
        );
        let r = redact("curl -H 'Authorization: Bearer 9fK2mQ7xLp4Rt8Vw1Zy3Bn6C'");
        assert_eq!(r.text, "curl -H 'Authorization: Bearer [REDACTED]'");
    }

    #[test]
    fn assignments_with_literals_but_not_names_or_references() {
        assert_eq!(
            redact("DB_PASSWORD=hunter2 in .env").text,
            "DB_PASSWORD=[REDACTED] in .env"
        );
        assert_eq!(
            redact(r#"api_key: "abc 123 def" and more"#).text,
            r#"api_key: "[REDACTED]" and more"#
        );
        assert_eq!(
            redact("GET /v1/x?token=a8Fj29dKq&page=2").text,
            "GET /v1/x?token=[REDACTED]&page=2"
        );
        assert_eq!(
            redact("the password is hunter2.").text,
            "the password is [REDACTED]."
        );
        for safe in [
            "set OPENAI_API_KEY in your shell",
            "password = ${DB_PASSWORD}",
            "token: process.env.GITHUB_TOKEN",
            "api_key=<your-key>",
            "password: string;",
            "the token is stored in the vault",
            "secret_key = os.environ['SECRET_KEY']",
            "TOKEN=$CI_JOB_TOKEN",
            "the password was [REDACTED]",
            "tokens: 1200 per request",
        ] {
            assert!(!contains_secret(safe), "{safe}: {:?}", redact(safe));
        }
    }

    #[test]
    fn high_entropy_strings_but_not_hashes_paths_or_identifiers() {
        assert_eq!(
            kinds("token=Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6"),
            vec![SecretKind::Assignment]
        );
        assert_eq!(
            kinds("here: Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6 ok"),
            vec![SecretKind::HighEntropy]
        );
        // An AWS secret access key on its own.
        assert!(contains_secret(
            "aws_secret h3Kq9+Zt/Lr2Xw8PbN5vYc1M7dGf4sTj6RaE0uWo done"
        ));
        for safe in [
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "see crates/mem-core/src/conversation.rs and HeaderNavigationBarComponent2",
            "getUserAccountSettingsV2Handler is the entry point",
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "https://docs.rs/tokio/latest/tokio/runtime/struct.Builder.html",
            "use snake_case for variables; commit messages in English",
            "channel https://www.youtube.com/channel/UC31MIcsVNbr1QRAx2ZpmhuQ",
            "new script `pa-RjIinI-oQ3QXE-LnbY2eA.js` is deployed",
        ] {
            assert!(!contains_secret(safe), "{safe}: {:?}", redact(safe));
        }
    }

    #[test]
    fn idempotent_and_multiple() {
        let text = "a AKIAIOSFODNN7EXAMPLE b https://u:p4ss!@h.io c xoxb-2345678901-AbCdEfGhIjKl";
        let once = redact(text);
        assert_eq!(once.withheld(), 3, "{once:?}");
        let twice = redact(&once.text);
        assert_eq!(twice.withheld(), 0, "{twice:?}");
        assert_eq!(twice.text, once.text);
    }

    #[test]
    fn chinese_text_and_odd_input_do_not_panic() {
        let r = redact("密码是 hunter2，令牌 ghp_16C7e42F292c6912E7710c838347Ae178B4a 在这里");
        assert_eq!(
            r.found,
            vec![SecretKind::Assignment, SecretKind::GithubToken]
        );
        assert_eq!(r.text, "密码是 [REDACTED]，令牌 [REDACTED] 在这里");
        assert!(!contains_secret("密码保存在 1Password 里"));
        let big = "a".repeat(1 << 20);
        assert!(!contains_secret(&big));
        let _ = redact("\u{0}\u{1b}[2J-----BEGIN PRIVATE KEY-----");
    }

    #[test]
    fn values_named_as_keys_and_user_password_pairs_are_withheld() {
        for (text, expected) in [
            (
                "the AES key for the export files is 3f7a9c2e8b1d4f6a0c5e9b2d7f1a3c8e5b0d4f6a9c2e7b1d3f8a5c0e9b2d4f7a; exports go to exports/enc/.",
                "the AES key for the export files is [REDACTED]; exports go to exports/enc/.",
            ),
            (
                "token 是 tkn_8Hq2Zx5Lm9Vt ，凭证放 .env.local",
                "token 是 [REDACTED] ，凭证放 .env.local",
            ),
            (
                "盐值是 q8Zr3Lm+Vx7Np/2Kc9Tw4Yh1= ，帮我算一下",
                "盐值是 [REDACTED] ，帮我算一下",
            ),
            (
                "the HMAC secret: 9f2c4e6a8b0d1f3a5c7e",
                "the HMAC secret: [REDACTED]",
            ),
            // A user and password after a word for credentials; a password word with a few
            // words on what it is for.
            (
                "creds are admin/Adm1n2024! for grafana",
                "creds are admin/[REDACTED] for grafana",
            ),
            (
                "the login for jenkins is deploy / J3nk!ns_pw",
                "the login for jenkins is deploy / [REDACTED]",
            ),
            (
                "login with admin:admin123 on the router",
                "login with admin:[REDACTED] on the router",
            ),
            (
                "basic auth is ops:Sup3rS3cret",
                "basic auth is ops:[REDACTED]",
            ),
            (
                "the passcode for the door is 884213",
                "the passcode for the door is [REDACTED]",
            ),
            (
                "the staging db pw is stag1ng!",
                "the staging db pw is [REDACTED]",
            ),
            (
                "login: `admin` / `Adm1n!2024`",
                "login: `admin` / `[REDACTED]`",
            ),
            (
                "creds are \"admin\"/\"Adm1n!2024\"",
                "creds are \"admin\"/\"[REDACTED]\"",
            ),
            ("auth: basic admin:Pa55w0rd", "auth: basic admin:[REDACTED]"),
            (
                "登录用 admin:Adm1n2024! 就行",
                "登录用 admin:[REDACTED] 就行",
            ),
            (
                "the db user is app and the pass is s3cret!",
                "the db user is app and the pass is [REDACTED]",
            ),
        ] {
            assert_eq!(redact(text).text, expected, "{text}");
        }
        for text in [
            "login: src/pages/login.tsx",
            "the auth flow is oauth:pkce",
            "account: us-east-1:123456789012",
            "the auth is jwt/RS256",
            "account: acme-prod:eu-west-1",
            "account is org:team-42",
            "login with github:oauth2",
            "the cache key is node-modules-v18.17.1-linux",
            "the S3 key for the report is reports/2024/q1/summary",
            "the idempotency key is req-2024-05-01-abc1",
            "the sort key is ts_2024q1_v3_shard7",
            "the release key is v2.14.3-rc1+build5",
            "the pin for the base image is alpine:3.19",
            "the version pin for react in this repo is 18.2.0",
            "the first pass is 2x faster",
            "登录页面在 src/pages/login.vue",
            "our pw policy is strict",
            "the token for it is in vault",
            // Names, paths, ids and hashes that a key word stands beside are no secrets.
            "the sort key is created_at",
            "the cache key is user:42",
            "the partition key for the events table is tenant_id_v2",
            "the key is ~/.ssh/id_ed25519 on the build box",
            "the key for the config is settings/v2/app2.yaml",
            "the fix is in commit 3f7a9c2e8b1d4f6a0c5e9b2d7f1a3c8e5b0d4f6a",
            "the token is read from $SEARCH_TOKEN",
        ] {
            assert_eq!(redact(text).text, text, "{text}");
        }
    }
}
