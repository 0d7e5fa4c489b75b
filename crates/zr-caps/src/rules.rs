//! Permission rules in Claude Code's grammar (DESIGN.md section 11):
//! `Tool`, `Tool(specifier)`, `mcp__server`, `mcp__server__tool`, `*`, in
//! lists `allow`, `ask` and `deny`, evaluated deny, then ask, then allow.
//!
//! Plain data and pure functions: the caller resolves paths (`..`,
//! symlinks) and hands over what a call touches as a [`Subject`].

mod call;
mod command;
mod domain;
mod path;
mod shell;

pub use command::CommandPattern;
pub use domain::DomainPattern;
pub use path::PathPattern;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zr_types::ToolDefinition;

pub(crate) use self::call::Call;
use self::path::PathProblem;
use crate::error::{PatternError, RuleError};
use crate::pattern::{PatternKind, ToolPattern};

/// One permission rule, as Claude Code writes them.
///
/// - `Tool`, `mcp__server`, `mcp__server__tool`, `mcp__server__*`, `Web*`,
///   `*`: every call of the tools the [`ToolPattern`] matches;
/// - `Bash(spec)`: Bash calls whose command matches (see
///   [`CommandPattern`]; a compound command is matched part by part, see
///   [`PermissionRules::evaluate`]);
/// - `Read(spec)`, `Edit(spec)`, `Write(spec)`, `Glob(spec)`,
///   `Grep(spec)`: calls whose path matches the glob (see
///   [`PathPattern`]); `Read(...)` applies to every file-reading tool
///   (Read, Glob, Grep), `Edit(...)` and `Write(...)` to both file-editing
///   tools (Edit, Write), `Glob(...)` and `Grep(...)` to that tool only;
/// - `WebFetch(domain:host)`: fetches of that host (see [`DomainPattern`]);
/// - any other builtin, `Tool(text)`: calls whose main argument is exactly
///   `text` (`Task(Explore)`: a Task call for the `Explore` subagent type;
///   `Skill(pdf)`), when the caller gives it as [`Subject::Argument`].
///
/// A rule with a specifier matches no call whose subject is of another
/// kind (`Read(src/**)` and a Read call given as [`Subject::Name`]).
///
/// `Display` and serde give the text as written (trimmed).
///
/// ```
/// use zr_caps::{PermissionRule, Specifier};
/// let rule: PermissionRule = "Bash(npm run test:*)".parse().unwrap();
/// assert!(matches!(rule.specifier(), Some(Specifier::Command(_))));
/// assert!("Bash()".parse::<PermissionRule>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct PermissionRule {
    text: String,
    tool: ToolPattern,
    specifier: Option<Specifier>,
}

/// What a rule's parentheses say; which kind follows from the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Specifier {
    /// `Bash(...)`: `npm run test:*`, `git status`, `git * main`.
    Command(CommandPattern),
    /// `Read`, `Edit`, `Write`, `Glob`, `Grep`: a path glob.
    Path(PathPattern),
    /// `WebFetch(domain:...)`.
    Domain(DomainPattern),
    /// Any other builtin: matched exactly against the call's
    /// [`Subject::Argument`].
    Argument(String),
}

/// What a call touches, as the engine sees it after resolving paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject<'a> {
    /// Nothing but the tool: only rules without a specifier speak.
    Name,
    /// A Bash command line, as the model wrote it.
    Command(&'a str),
    /// An absolute path, `..` and symlinks resolved (a file tool's file, or
    /// the folder Glob and Grep search).
    Path(&'a Path),
    /// A URL to fetch; only its host matters.
    Url {
        /// The host, without port.
        host: &'a str,
    },
    /// The main argument of another tool (Task's subagent type, Skill's
    /// name).
    Argument(&'a str),
}

/// Where relative path rules and `~` are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleBase<'a> {
    /// The folder of the file the rules come from (for `zr.toml` and agent
    /// files, the project folder): `/path`, `./path` and `path` start here.
    pub base: &'a Path,
    /// The user's home folder, for `~/path`; `None`: `~` rules match
    /// nothing.
    pub home: Option<&'a Path>,
}

/// What the first rule to speak says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Refuse the call.
    Deny,
    /// Ask the user (or refuse where no one can be asked).
    Ask,
    /// Run it without asking.
    Allow,
}

/// A verdict and the rule it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleMatch<'r> {
    /// What to do.
    pub verdict: Verdict,
    /// The rule that decided; for an allowed compound command, the rule
    /// that matched its first part.
    pub rule: &'r PermissionRule,
}

/// The three lists of rules of one source (`zr.toml [permissions]`, a
/// settings file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionRules {
    /// Calls that run without asking.
    pub allow: Vec<PermissionRule>,
    /// Calls to ask the user about.
    pub ask: Vec<PermissionRule>,
    /// Calls that are refused.
    pub deny: Vec<PermissionRule>,
}

impl PermissionRules {
    /// Whether no list holds a rule.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The verdict of the rules on one call of `tool`, deny first, then
    /// ask, then allow (Claude Code's order); `None` when no rule speaks.
    ///
    /// A Bash command is split into its simple commands (on `&&`, `||`,
    /// `;`, `|`, `&`, newlines; the commands inside `$(...)`, backticks and
    /// `<(...)` are parts too; quotes and escapes respected). A deny or ask
    /// rule speaks when it matches any part, with or without its leading
    /// `VAR=value` assignments; the allow rules allow only when every part,
    /// assignments included, is matched by one of them (`LD_PRELOAD=x.so
    /// git status` is not `git status`). Redirections stay in a part's text, so `Bash(echo:*)`
    /// allows `echo x > f`: what a command may write is the sandbox's
    /// business. A command that cannot be split (an unclosed quote) is
    /// allowed only by a rule without specifier (`Bash`); deny and ask
    /// rules are also matched against its whole text.
    ///
    /// ```
    /// use std::path::Path;
    /// use zr_caps::{PermissionRules, RuleBase, Subject, Verdict};
    /// use zr_types::{ToolDefinition, ToolOrigin};
    /// let rules = PermissionRules {
    ///     allow: vec!["Bash(git status)".parse().unwrap(), "Bash(git log:*)".parse().unwrap()],
    ///     ask: vec![],
    ///     deny: vec!["Bash(git push:*)".parse().unwrap()],
    /// };
    /// let bash = ToolDefinition::new("Bash".parse().unwrap(), "", ToolOrigin::Builtin);
    /// let base = RuleBase { base: Path::new("/p"), home: None };
    /// let verdict = |c| rules.evaluate(&bash, &Subject::Command(c), &base).map(|m| m.verdict);
    /// assert_eq!(verdict("git status && git log -3"), Some(Verdict::Allow));
    /// assert_eq!(verdict("git status && rm -rf x"), None);
    /// assert_eq!(verdict("git status; git push origin"), Some(Verdict::Deny));
    /// ```
    #[must_use]
    pub fn evaluate(
        &self,
        tool: &ToolDefinition,
        subject: &Subject<'_>,
        base: &RuleBase<'_>,
    ) -> Option<RuleMatch<'_>> {
        let call = Call::new(tool, subject, base);
        let found = |verdict, rule| Some(RuleMatch { verdict, rule });
        if let Some(rule) = call.any(&self.deny) {
            return found(Verdict::Deny, rule);
        }
        if let Some(rule) = call.any(&self.ask) {
            return found(Verdict::Ask, rule);
        }
        call.every(&self.allow)
            .and_then(|rule| found(Verdict::Allow, rule))
    }
}

impl PermissionRule {
    /// The rule as written (trimmed).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The tool part.
    #[must_use]
    pub fn tool(&self) -> &ToolPattern {
        &self.tool
    }

    /// The specifier, if any.
    #[must_use]
    pub fn specifier(&self) -> Option<&Specifier> {
        self.specifier.as_ref()
    }

    /// Whether the rule speaks about calls of `tool` at all (whatever they
    /// touch): the tool pattern matches it or, with a specifier, `tool` is
    /// of the rule's family (`Read(...)`: Read, Glob, Grep; `Edit(...)`,
    /// `Write(...)`: Edit, Write).
    #[must_use]
    pub fn applies_to(&self, tool: &ToolDefinition) -> bool {
        if self.specifier.is_none() {
            return self.tool.matches(tool);
        }
        let name = tool.name.as_str();
        match self.tool.as_str() {
            "Read" => matches!(name, "Read" | "Glob" | "Grep"),
            "Edit" | "Write" => matches!(name, "Edit" | "Write"),
            own => own == name,
        }
    }
}

/// A rule with a specifier of the same tool, for messages.
fn example(tool: &str) -> &'static str {
    match tool {
        "Bash" => "'Bash(npm run test:*)'",
        "Read" | "Glob" | "Grep" => "'Read(./.env)' or 'Read(src/**)'",
        "Edit" | "Write" => "'Edit(src/**)'",
        "WebFetch" => "'WebFetch(domain:docs.rs)'",
        _ => "'Task(Explore)'",
    }
}

impl FromStr for PermissionRule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, RuleError> {
        let text = s.trim();
        if text.is_empty() {
            return Err(RuleError::Empty);
        }
        let rule = || text.to_owned();
        let Some(open) = text.find('(') else {
            if text.contains(')') {
                return Err(RuleError::Unbalanced { rule: rule() });
            }
            let tool = text.parse().map_err(|error| RuleError::Tool {
                rule: rule(),
                error,
            })?;
            return Ok(Self {
                text: rule(),
                tool,
                specifier: None,
            });
        };
        let inner = text
            .strip_suffix(')')
            .map(|t| &t[open + 1..])
            .filter(|inner| balanced(inner))
            .ok_or_else(|| RuleError::Unbalanced { rule: rule() })?;
        let name = text[..open].trim();
        if name.is_empty() {
            return Err(RuleError::MissingTool { rule: rule() });
        }
        let tool: ToolPattern = name
            .parse()
            .map_err(|error: PatternError| RuleError::Tool {
                rule: rule(),
                error,
            })?;
        if !matches!(tool.kind(), PatternKind::Exact(_)) || name.starts_with("mcp__") {
            return Err(RuleError::SpecifierNotTaken {
                rule: rule(),
                tool: name.to_owned(),
            });
        }
        let spec = inner.trim();
        let empty = || RuleError::EmptySpecifier {
            rule: rule(),
            tool: name.to_owned(),
            example: example(name),
        };
        if spec.is_empty() {
            return Err(empty());
        }
        let specifier = match name {
            "Bash" => Specifier::Command(CommandPattern::parse(spec).ok_or_else(empty)?),
            "Read" | "Edit" | "Write" | "Glob" | "Grep" => {
                Specifier::Path(PathPattern::parse(spec).map_err(|problem| match problem {
                    PathProblem::Parent => RuleError::ParentPath { rule: rule() },
                    PathProblem::Glob(error) => RuleError::Glob {
                        rule: rule(),
                        error,
                    },
                })?)
            }
            "WebFetch" => Specifier::Domain(DomainPattern::parse(spec).map_err(|reason| {
                RuleError::Domain {
                    rule: rule(),
                    reason,
                }
            })?),
            _ => Specifier::Argument(spec.to_owned()),
        };
        Ok(Self {
            text: rule(),
            tool,
            specifier: Some(specifier),
        })
    }
}

/// Whether the parentheses of `text` pair up.
fn balanced(text: &str) -> bool {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

impl TryFrom<&str> for PermissionRule {
    type Error = RuleError;
    fn try_from(s: &str) -> Result<Self, RuleError> {
        s.parse()
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PermissionRule({:?})", self.text)
    }
}

impl Serialize for PermissionRule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for PermissionRule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
