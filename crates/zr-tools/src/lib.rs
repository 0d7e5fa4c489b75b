//! Builtin tools: Bash, Read, Write, Edit, Glob, Grep, WebFetch, WebSearch, AskUserQuestion, TodoWrite, Config, Cron.
