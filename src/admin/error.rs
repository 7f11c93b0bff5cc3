//! Why an admin router was not built ([`BuildError`]), and the bounds of a
//! token's secret that its refusals name.

use std::fmt;

/// Shortest secret accepted.
pub(super) const MIN_SECRET: usize = 16;
/// Longest secret accepted.
pub(super) const MAX_SECRET: usize = 256;

/// Why [`AdminBuilder::build`](super::AdminBuilder::build) refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Mutations are on and no [`token`](super::AdminBuilder::token) was given: call
    /// `.token(name, secret)`, or `.read_only()` for a router without mutations.
    NoToken,
    /// A token's secret is shorter than 16 or longer than 256 bytes, or holds
    /// a character other than visible ASCII.
    BadSecret {
        /// The token's name.
        name: String,
    },
    /// A token's name is empty, longer than 64 bytes, or given twice.
    BadName {
        /// The name.
        name: String,
    },
    /// Two tokens were given the same secret.
    SharedSecret {
        /// The later token's name.
        name: String,
        /// The name of the token that has the secret already.
        with: String,
    },
    /// [`events`](super::AdminBuilder::events) was given 0, or more than 65,536.
    BadCapacity(usize),
    /// [`worst_keys`](super::AdminBuilder::worst_keys) was given 0, or more than 1,000.
    BadWorstKeys(usize),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoToken => f.write_str(
                "admin router: mutations are on and no token was given; \
                 call `.token(name, secret)`, or `.read_only()`",
            ),
            BuildError::BadSecret { name } => write!(
                f,
                "admin router: the secret of token `{name}` must be {MIN_SECRET} to {MAX_SECRET} \
                 visible ASCII characters"
            ),
            BuildError::BadName { name } => write!(
                f,
                "admin router: token name `{name}` is empty, over 64 bytes, or given twice"
            ),
            BuildError::SharedSecret { name, with } => write!(
                f,
                "admin router: token `{name}` has the secret of token `{with}`; give each token its own"
            ),
            BuildError::BadCapacity(n) => {
                write!(f, "admin router: an event ring of {n}; expected 1 to 65536")
            }
            BuildError::BadWorstKeys(n) => {
                write!(f, "admin router: {n} worst keys; expected 1 to 1000")
            }
        }
    }
}

impl std::error::Error for BuildError {}
