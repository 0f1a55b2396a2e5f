//! Runs the diff gate's analysis on the current directory's staged changes and prints one line:
//! files, flagged files, elapsed milliseconds and this process's peak memory (`VmHWM` from
//! `/proc/self/status`; git's own processes are not included). `bench/diff-gate.sh` times it.
//!
//!     cargo run --release --example analyze -p gavel-diffgate -- [--report | --print-report]
//!
//! `--report` also builds the review report and adds its size and time; `--print-report`
//! prints the report itself after the summary line.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut build_report = false;
    let mut print_report = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--report" => build_report = true,
            "--print-report" => {
                build_report = true;
                print_report = true;
            }
            _ => {
                let _ = writeln!(
                    std::io::stderr(),
                    "usage: analyze [--report | --print-report]"
                );
                return ExitCode::from(2);
            }
        }
    }
    match run(build_report, print_report) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let mut stderr = std::io::stderr();
            let _ = writeln!(stderr, "error: {err}");
            let mut source = std::error::Error::source(&*err);
            while let Some(cause) = source {
                let _ = writeln!(stderr, "caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

fn run(build_report: bool, print_report: bool) -> Result<(), Box<dyn std::error::Error>> {
    let repo = std::env::current_dir()?;
    let started = Instant::now();
    let analysis = gavel_diffgate::analyze_staged(&gavel_exec::git::Git::at(&repo))?;
    let analyze_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut line = format!(
        "files={} flagged={} analyze_ms={analyze_ms:.1}",
        analysis.files.len(),
        analysis.flagged().len()
    );
    let mut text = None;
    if build_report {
        let started = Instant::now();
        let report = gavel_diffgate::report(&gavel_exec::git::Git::at(&repo), &analysis)?;
        let report_ms = started.elapsed().as_secs_f64() * 1000.0;
        write!(
            line,
            " report_ms={report_ms:.1} report_bytes={}",
            report.len()
        )?;
        text = Some(report);
    }
    if let Some(kb) = peak_rss_kb() {
        write!(line, " peak_rss_kb={kb}")?;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    if let (true, Some(report)) = (print_report, text) {
        stdout.write_all(report.as_bytes())?;
    }
    stdout.flush()?;
    Ok(())
}

/// This process's peak resident set size in KiB (Linux only).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
