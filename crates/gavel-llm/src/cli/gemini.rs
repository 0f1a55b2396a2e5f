//! `gemini:MODEL`: the Gemini CLI (filled in once its wire behaviour is pinned down).
