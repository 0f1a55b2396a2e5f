//! `claude:MODEL`: the Claude Code CLI (filled in once its wire behaviour is pinned down).
