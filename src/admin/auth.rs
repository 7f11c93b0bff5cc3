//! Bearer tokens: the checks a token passes to be built, and the comparison of
//! a presented credential with every token, in constant time.

use std::hint::black_box;

use http::HeaderMap;

use super::error::{BuildError, MAX_SECRET, MIN_SECRET};

/// Longest `Authorization` header read; a longer one is refused unread.
pub(super) const MAX_CREDENTIAL: usize = 512;
/// Longest token name.
const MAX_NAME: usize = 64;

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Read,
    Mutate,
}

/// One token the app supplied.
pub(super) struct Token {
    name: String,
    secret: Vec<u8>,
    role: Role,
}

impl Token {
    pub(super) fn new(name: String, secret: String, role: Role) -> Self {
        Token {
            name,
            secret: secret.into_bytes(),
            role,
        }
    }
}

/// The tokens of one router, checked.
pub(super) struct Tokens(Vec<Token>);

/// Who a request speaks for: the token's name and what it may do.
#[derive(Clone, Debug)]
pub(super) struct Caller {
    pub(super) name: String,
    pub(super) role: Role,
}

/// Why a request's credential was refused (said in the `401`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    Missing,
    TooLong,
    NotBearer,
    Wrong,
}

impl Refusal {
    pub(super) fn message(self) -> &'static str {
        match self {
            Refusal::Missing => "this endpoint needs `Authorization: Bearer <token>`",
            Refusal::TooLong => "the credential is too long",
            Refusal::NotBearer => "the credential is not a bearer token",
            Refusal::Wrong => "the token is not one of this router's",
        }
    }
}

impl Tokens {
    pub(super) fn new(tokens: Vec<Token>) -> Result<Self, BuildError> {
        for (i, token) in tokens.iter().enumerate() {
            let name_ok = !token.name.is_empty()
                && token.name.len() <= MAX_NAME
                && !tokens[..i].iter().any(|t| t.name == token.name);
            if !name_ok {
                return Err(BuildError::BadName {
                    name: token.name.clone(),
                });
            }
            let secret_ok = (MIN_SECRET..=MAX_SECRET).contains(&token.secret.len())
                && token.secret.iter().all(|b| b.is_ascii_graphic());
            if !secret_ok {
                return Err(BuildError::BadSecret {
                    name: token.name.clone(),
                });
            }
            // One secret, one token: otherwise the last of them would decide
            // both what its holder may do and the name actions are told under.
            if let Some(first) = tokens[..i].iter().find(|t| t.secret == token.secret) {
                return Err(BuildError::SharedSecret {
                    name: token.name.clone(),
                    with: first.name.clone(),
                });
            }
        }
        Ok(Tokens(tokens))
    }

    pub(super) fn can_mutate(&self) -> bool {
        self.0.iter().any(|t| t.role == Role::Mutate)
    }

    pub(super) fn names(&self) -> Vec<&str> {
        self.0.iter().map(|t| t.name.as_str()).collect()
    }

    /// The caller whose token `headers` carry.
    pub(super) fn caller(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
        let value = values.next().ok_or(Refusal::Missing)?;
        if values.next().is_some() {
            return Err(Refusal::NotBearer);
        }
        let bytes = value.as_bytes();
        if bytes.len() > MAX_CREDENTIAL {
            return Err(Refusal::TooLong);
        }
        let presented = strip_bearer(bytes).ok_or(Refusal::NotBearer)?;
        // Every token is compared, whichever matches: the time taken depends on
        // the tokens' lengths, not on where the presented one differs.
        let mut found = None;
        for token in &self.0 {
            if same(presented, &token.secret) {
                found = Some(token);
            }
        }
        found
            .map(|t| Caller {
                name: t.name.clone(),
                role: t.role,
            })
            .ok_or(Refusal::Wrong)
    }
}

/// The credential after `Bearer ` (the scheme's case is free, RFC 9110).
fn strip_bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
}

/// Whether `presented` equals `secret`, in time that depends on `secret`'s
/// length alone: every byte of `secret` is compared, differences are gathered
/// by `|` with no branch, and the length check joins them at the end.
fn same(presented: &[u8], secret: &[u8]) -> bool {
    let mut diff = u8::from(presented.len() != secret.len());
    for (i, &s) in secret.iter().enumerate() {
        // A shorter presented credential compares as zeros past its end.
        let p = presented.get(i).copied().unwrap_or(0);
        diff |= black_box(p ^ s);
    }
    black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_needs_every_byte_and_the_length() {
        assert!(same(b"abcdefghijklmnop", b"abcdefghijklmnop"));
        assert!(!same(b"abcdefghijklmnoq", b"abcdefghijklmnop"));
        assert!(!same(b"bbcdefghijklmnop", b"abcdefghijklmnop"));
        assert!(!same(b"abcdefghijklmno", b"abcdefghijklmnop"));
        assert!(!same(b"abcdefghijklmnopq", b"abcdefghijklmnop"));
        assert!(!same(b"abcdefghijklmno\0", b"abcdefghijklmno"));
        assert!(!same(b"", b"abcdefghijklmnop"));
    }

    #[test]
    fn two_tokens_may_not_share_a_secret() {
        let secret = "0123456789abcdef".to_owned();
        let tokens = vec![
            Token::new("ops".into(), secret.clone(), Role::Mutate),
            Token::new("dash".into(), secret, Role::Read),
        ];
        match Tokens::new(tokens) {
            Err(BuildError::SharedSecret { name, with }) => {
                assert_eq!((name.as_str(), with.as_str()), ("dash", "ops"));
            }
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("two tokens with one secret were accepted"),
        }
    }

    #[test]
    fn the_scheme_is_bearer_in_any_case() {
        assert_eq!(strip_bearer(b"Bearer xyz"), Some(&b"xyz"[..]));
        assert_eq!(strip_bearer(b"bEARER xyz"), Some(&b"xyz"[..]));
        assert_eq!(strip_bearer(b"Basic xyzxyz"), None);
        assert_eq!(strip_bearer(b"Bear"), None);
    }
}
