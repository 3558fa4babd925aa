//! The simulator's errors: a bad parameter (named by its command-line flag) or
//! a failure to write results.

/// Everything that can go wrong in `bauxite-sim`.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A scenario or study parameter is out of range. `flag` is the parameter's
    /// name as the command line spells it, so the message points at what to fix.
    #[error("--{flag}: {message}")]
    InvalidParameter {
        /// The command-line flag, without the leading dashes.
        flag: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// Writing an output file failed.
    #[error("writing {}", path.display())]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Reading an input file (a shard's) failed.
    #[error("reading {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A shard's `summary.json` is not valid JSON of a shard.
    #[error("{}: not a shard's summary", path.display())]
    ShardJson {
        /// The file.
        path: std::path::PathBuf,
        /// The parse error, with its line and column.
        source: serde_json::Error,
    },
    /// An input file that is not a readable regular file of a sane size.
    #[error("{}", path.display())]
    Input {
        /// The file.
        path: std::path::PathBuf,
        /// Why it was not read.
        source: bauxite_core::config::FileReadError,
    },
    /// A `summary.json` that is not one of `bauxite demo` or `bauxite sim robot`.
    #[error("{}: not a summary.json of `bauxite demo --link` or `bauxite sim robot`", path.display())]
    SummaryJson {
        /// The file.
        path: std::path::PathBuf,
        /// The parse error, with its line and column.
        source: serde_json::Error,
    },
    /// Shards that do not make one study.
    #[error("{}: {message}", path.display())]
    Merge {
        /// The shard's file that does not fit.
        path: std::path::PathBuf,
        /// Why.
        message: String,
    },
    /// The output directory cannot be created or written to.
    #[error("--out")]
    OutDir(#[source] bauxite_core::OutDirError),
    /// Drawing a chart failed.
    #[error(transparent)]
    Chart(#[from] bauxite_telemetry::chart::ChartError),
    /// Encoding the JSON summary failed.
    #[error("encoding summary.json")]
    Json(#[from] serde_json::Error),
}

impl SimError {
    /// An [`SimError::InvalidParameter`] for `flag`.
    pub fn invalid(flag: &'static str, message: impl Into<String>) -> Self {
        Self::InvalidParameter { flag, message: message.into() }
    }
}
