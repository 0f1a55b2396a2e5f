//! End-to-end tests of the `gavel` binary: every user-visible flow, run as a person would run
//! it, in hermetic temporary repositories (fixed clock, isolated git config, own HOME).

mod agents;
mod agents_tools;
mod bad_input;
mod change;
mod change_archive;
mod change_plan;
mod confine;
mod crash;
mod credentials;
mod diff_gate;
mod doc_kinds;
mod doctor;
mod forward_compat;
mod github;
mod github_failures;
mod implement;
mod implement_agents;
mod implement_crash;
mod implement_flows;
mod lld;
mod lld_crash;
mod mcp;
mod parallel;
mod platform;
mod pty;
mod real_cli_faults;
mod real_cli_profiles;
mod real_clis;
mod regressions;
mod regressions_cli;
mod scenarios;
mod scenarios_filing;
mod snapshots;
mod spend;
mod util;
