//! `gavel-confine --write DIR [--write DIR]... -- PROGRAM [ARGS]...`: run PROGRAM able to write
//! only beneath the given folders (and a few devices), with everything it starts.
//!
//! The same launcher as the hidden `gavel __confine`, as its own small binary: gavel-exec's
//! tests run confined processes through it (they find it as `CARGO_BIN_EXE_gavel-confine`),
//! and a person can try the confinement by hand, e.g.
//! `gavel-confine --write "$PWD" -- sh -c 'touch inside ../outside'`. It restricts itself
//! with Linux Landlock and then becomes PROGRAM; when it cannot (no usable Landlock, a missing
//! folder, wrong arguments) it prints `gavel confine: ...` and exits 126, or 127 when PROGRAM
//! does not exist. See `gavel_exec::confine`.

fn main() -> std::process::ExitCode {
    gavel_exec::confine::launcher_main(std::env::args_os().skip(1).collect())
}
