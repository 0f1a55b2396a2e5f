//! In-process tests of workflows: the real engine over the memory store, a fixed clock, a
//! temporary git repository and the scripted provider, with gates answered by value. They prove
//! routing, budgets, filing and gates without spawning the binary.

mod change_archive;
mod change_impl_routing;
mod change_plan_routing;
mod diff_review;
mod document_routing;
mod implement_routing;
mod kit;
mod layering;
mod openspec;
mod structured;
mod timing;
