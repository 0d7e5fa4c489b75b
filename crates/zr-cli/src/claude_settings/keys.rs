//! Claude Code's settings keys that zr reads past without using them:
//! they are valid in the files zr shares with Claude Code, so zr lists
//! them (`zr config`) instead of warning about them. A key in neither
//! these lists nor zr's is a warning with the closest name.

/// Top-level keys of Claude Code's settings that zr does not use.
pub(crate) const CLAUDE_CODE_KEYS: &[&str] = &[
    "agent",
    "allowManagedHooksOnly",
    "allowManagedPermissionRulesOnly",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "attribution",
    "autoUpdates",
    "autoUpdatesChannel",
    "availableModels",
    "awsAuthRefresh",
    "awsCredentialExport",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "deniedMcpServers",
    "allowedMcpServers",
    "disabledMcpjsonServers",
    "effortLevel",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "fileSuggestion",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "language",
    "otelHeadersHelper",
    "outputStyle",
    "plansDirectory",
    "preferredNotifChannel",
    "respectGitignore",
    "sandbox",
    "showTurnDuration",
    "skipWebFetchPreflight",
    "spinnerTipsEnabled",
    "spinnerTipsOverride",
    "spinnerVerbs",
    "statusLine",
    "strictKnownMarketplaces",
    "subagentStatusLine",
    "terminalProgressBarEnabled",
    "theme",
    "useEnterpriseMcpConfigOnly",
    "verbose",
];

/// Keys of `permissions` that zr does not use.
pub(crate) const PERMISSION_KEYS: &[&str] = &["disableBypassPermissionsMode", "disableAutoMode"];

/// Keys of one hook that zr does not use.
pub(crate) const HOOK_KEYS: &[&str] = &["async", "once", "statusMessage", "prompt", "model"];
