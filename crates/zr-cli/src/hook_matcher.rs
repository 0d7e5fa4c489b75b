//! A hook group's `matcher` (Claude Code's: empty or `*` for all, names
//! joined by `|`, or a regular expression over the whole name): read by
//! zr.toml's and the settings files' hooks alike, below both.

/// Which names a group's commands run for.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// Empty, missing or `*`.
    All,
    /// `Bash`, `Write|Edit`: exact names.
    Names(Vec<String>),
    /// Anything else: a regular expression over the whole name.
    Regex(regex::Regex),
}

impl Matcher {
    /// The matcher `text` means.
    ///
    /// # Errors
    ///
    /// The regular expression's error.
    pub(crate) fn parse(text: Option<&str>) -> Result<Self, regex::Error> {
        let text = text.unwrap_or("").trim();
        if text.is_empty() || text == "*" {
            return Ok(Self::All);
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '|';
        if text.chars().all(plain) {
            return Ok(Self::Names(text.split('|').map(str::to_owned).collect()));
        }
        regex::Regex::new(&format!("^(?:{text})$")).map(Self::Regex)
    }

    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Names(names) => names.iter().any(|n| n == name),
            Self::Regex(re) => re.is_match(name),
        }
    }
}
