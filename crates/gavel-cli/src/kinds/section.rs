//! A workflow family's own table in `gavel.toml` (`[implement]`, `[changes]`), declared by its
//! kinds' registration rather than by the settings code.
//!
//! [`Settings::load`](crate::settings::Settings::load) reads the file once, takes each
//! registered section's table out of it (with its position in the file, so an error still names
//! its line), hands the rest to the shared settings types (which refuse any key nobody
//! declared), and keeps each section's checked value for the kinds to read back by type
//! ([`Settings::section`](crate::settings::Settings::section)). The generated configuration
//! reference appends each section's description (`reference.toml` beside its code).

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::DeValue;

use crate::error::CliError;

/// One table of `gavel.toml` that belongs to a workflow family.
pub struct SettingsSection {
    /// The table's name (`implement` for `[implement]`).
    pub table: &'static str,
    /// Its sections and keys described for the reference page (`reference.toml` beside the
    /// section's code: `[[section]]` entries, as in settings/reference.toml).
    pub reference: &'static str,
    /// The fields of the type its table is read into, as serde lists them (the reference's
    /// tests compare them with the descriptions).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fields: fn() -> &'static [&'static str],
    /// Reads and checks the table (`None`: the file has none, so every default applies).
    pub load: Load,
}

/// What reads and checks a section.
pub type Load = fn(Option<Raw<'_>>, &SectionInput<'_>) -> Result<Box<dyn SectionValue>, CliError>;

/// A section's table as written, with its place in the file.
pub type Raw<'a> = Spanned<DeValue<'a>>;

/// What a section's `load` may use besides its table.
pub struct SectionInput<'a> {
    /// The configuration file, for messages.
    pub path: &'a Path,
    /// Its text, for naming the line an error is on.
    pub text: &'a str,
    /// Checks a repository-relative folder setting (`key`, value).
    pub relative: &'a dyn Fn(&str, &str) -> Result<PathBuf, CliError>,
}

impl SectionInput<'_> {
    /// `T` read from `raw` (defaults when the file has no such table), an error naming the
    /// line and the key when it does not fit `T`.
    pub fn parse<T: DeserializeOwned + Default>(
        &self,
        raw: Option<Raw<'_>>,
    ) -> Result<T, CliError> {
        match raw {
            None => Ok(T::default()),
            Some(raw) => T::deserialize(toml::de::ValueDeserializer::from(raw))
                .map_err(|e| crate::settings::invalid(self.path, self.text, &e)),
        }
    }
}

/// A section's checked value, kept in the settings.
pub trait SectionValue: Any + Send + Sync + std::fmt::Debug {
    /// Its `roles` table (`[changes.roles]`), for the kinds whose roles come from it
    /// ([`RoleDefaults::table`](super::RoleDefaults::table)).
    fn roles(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
}
