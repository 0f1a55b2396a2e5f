//! The npm tools the end-to-end tests run for real (the agent CLIs, the OpenSpec CLI, the MCP
//! inspector), each pinned by a `package-lock.json` under `tools/NAME/` and installed with
//! `npm ci` once, under a lock, into a cache outside the checkout (a checkout stays the size of
//! its sources; clones and worktrees share one install per lock file).
//!
//! The cache is `$GAVEL_TOOLS_CACHE`, else `$XDG_CACHE_HOME/gavel/tools`, else
//! `~/.cache/gavel/tools`; each tool is installed in `NAME-HASH/`, HASH being the first 16 hex
//! digits of its lock file's SHA-256, so a changed pin installs beside the old one.

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::Command;

use sha2::{Digest, Sha256};

/// The folder the pinned npm tools are installed under (see the module's doc).
pub fn tools_cache() -> Result<PathBuf, String> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("GAVEL_TOOLS_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(dir).join("gavel/tools"));
    }
    var("HOME")
        .map(|h| PathBuf::from(h).join(".cache/gavel/tools"))
        .ok_or_else(|| "neither GAVEL_TOOLS_CACHE, XDG_CACHE_HOME nor HOME is set".to_owned())
}

/// `node_modules/.bin` of the pinned npm tool `name` (`tools/{name}/package-lock.json` of this
/// repository), after making sure those versions are installed in the cache. The error says
/// what failed (npm missing, `npm ci` output).
pub fn npm_tool_bin(name: &str) -> Result<PathBuf, String> {
    let pins = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools")
        .join(name);
    let read = |file: &str| {
        fs::read(pins.join(file)).map_err(|e| format!("cannot read {}/{file}: {e}", pins.display()))
    };
    let lock_file = read("package-lock.json")?;
    let manifest = read("package.json")?;
    let hash: String = Sha256::digest(&lock_file)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = tools_cache()?.join(format!("{name}-{hash}"));
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock = File::create(dir.join(".install.lock"))
        .map_err(|e| format!("cannot create {}/.install.lock: {e}", dir.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
    let stamp = dir.join("node_modules/.gavel-installed");
    if fs::read(&stamp).ok().as_deref() != Some(lock_file.as_slice()) {
        fs::write(dir.join("package.json"), &manifest)
            .and_then(|()| fs::write(dir.join("package-lock.json"), &lock_file))
            .map_err(|e| format!("cannot copy the pins into {}: {e}", dir.display()))?;
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("cannot run npm (is Node.js installed?): {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "npm ci in {} failed:\n{}\n{}",
                dir.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        fs::write(&stamp, &lock_file).map_err(|e| format!("cannot write the stamp: {e}"))?;
    }
    Ok(dir.join("node_modules/.bin"))
}
