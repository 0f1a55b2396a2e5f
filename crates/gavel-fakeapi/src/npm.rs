//! The npm tools the end-to-end tests run for real (the agent CLIs, the OpenSpec CLI, the MCP
//! inspector), each pinned by a `package-lock.json` under `tools/NAME/` and installed with
//! `npm ci` once, under a lock, when missing or when the lock file changed.

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::Command;

/// `tools/{name}/node_modules/.bin` of this repository, after making sure the pinned versions
/// are installed. The error says what failed (npm missing, `npm ci` output).
pub fn npm_tool_bin(name: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools")
        .join(name);
    let lock = File::create(dir.join(".install.lock"))
        .map_err(|e| format!("cannot create {}/.install.lock: {e}", dir.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
    let stamp = dir.join("node_modules/.gavel-installed");
    let want = fs::read_to_string(dir.join("package-lock.json"))
        .map_err(|e| format!("cannot read {}/package-lock.json: {e}", dir.display()))?;
    if fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
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
        fs::write(&stamp, &want).map_err(|e| format!("cannot write the stamp: {e}"))?;
    }
    Ok(dir.join("node_modules/.bin"))
}
