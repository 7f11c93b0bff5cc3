//! [`AsKey`]: what a value lends to a keyed group to find its key's breaker, and
//! what the group keeps when the key is new.

use std::borrow::{Borrow, Cow};
use std::fmt::Debug;
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::rc::Rc;
use std::sync::Arc;

/// A value that names a key of a keyed group (`#[circuit_breaker(key = ..)]`,
/// [`KeyedGroup::breaker_for`](crate::KeyedGroup::breaker_for)).
///
/// A call looks its key up by [`lookup`](AsKey::lookup), a borrow: nothing is
/// allocated, cloned or interned for a key the group holds. Only a key the group
/// does not hold yet is turned into its [`Owned`](AsKey::Owned) form, which the
/// group keeps until the key is evicted. Values whose `Owned` type is the same
/// name the same keys: `&str`, `String`, `Box<str>`, `Arc<str>` and
/// `Cow<str>` all key a group by `String`, so call sites passing any of them
/// share its breakers.
///
/// Implemented for strings, every integer type, `char`, `bool`, IP and socket
/// addresses, references to any of these, and 2- and 3-tuples of owned keys
/// (`(String, u16)`, `(IpAddr, u16)`; their lookup is the tuple itself, so build
/// it without allocating, or key by one part). For a type of your own:
///
/// ```
/// # use breaker_core as breakerbox;
/// use breakerbox::{AsKey, Config, keyed::KeyedGroup};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
/// struct TenantId(u32);
///
/// impl AsKey for TenantId {
///     type Owned = TenantId;
///     type Lookup = TenantId;
///     fn lookup(&self) -> &TenantId { self }
///     fn to_owned_key(&self) -> TenantId { *self }
/// }
///
/// let tenants = KeyedGroup::<TenantId>::new("tenants", Config::default(), 1_000);
/// tenants.breaker_for(&TenantId(7)).try_acquire().unwrap().success();
/// assert_eq!(tenants.metrics().keys, 1);
/// ```
///
/// The contract is `Borrow`'s: `lookup()` and `to_owned_key().borrow()` must
/// hash and compare alike.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot key a breaker: it does not implement `AsKey`",
    label = "the `key` of a keyed group",
    note = "keys are strings, integers, `char`, `bool`, IP and socket addresses, tuples of them, or a type of yours that implements `breakerbox::AsKey` (see its docs)"
)]
pub trait AsKey {
    /// What the group keeps for a new key, and the group's key type.
    type Owned: Borrow<Self::Lookup> + Hash + Eq + Debug + Send + Sync + 'static;
    /// What a call hashes and compares to find its key, borrowed from `self`.
    type Lookup: Hash + Eq + ?Sized;
    /// The borrowed form, which finds the key among the group's.
    fn lookup(&self) -> &Self::Lookup;
    /// The owned form, made only when the group does not hold the key.
    fn to_owned_key(&self) -> Self::Owned;
}

// Not offered in "the following types implement `AsKey`": a reference is a key
// when what it points at is one, which the error names.
#[diagnostic::do_not_recommend]
impl<T: AsKey + ?Sized> AsKey for &T {
    type Owned = T::Owned;
    type Lookup = T::Lookup;
    #[inline]
    fn lookup(&self) -> &T::Lookup {
        (**self).lookup()
    }
    fn to_owned_key(&self) -> T::Owned {
        (**self).to_owned_key()
    }
}

#[diagnostic::do_not_recommend]
impl<T: AsKey + ?Sized> AsKey for &mut T {
    type Owned = T::Owned;
    type Lookup = T::Lookup;
    #[inline]
    fn lookup(&self) -> &T::Lookup {
        (**self).lookup()
    }
    fn to_owned_key(&self) -> T::Owned {
        (**self).to_owned_key()
    }
}

/// Strings: looked up as `str`, kept as `String`.
macro_rules! string_keys {
    ($($ty:ty),*) => {$(
        impl AsKey for $ty {
            type Owned = String;
            type Lookup = str;
            #[inline]
            fn lookup(&self) -> &str {
                self
            }
            fn to_owned_key(&self) -> String {
                String::from(&**self)
            }
        }
    )*};
}

string_keys!(String, Box<str>, Arc<str>, Rc<str>, Cow<'_, str>);

impl AsKey for str {
    type Owned = String;
    type Lookup = str;
    #[inline]
    fn lookup(&self) -> &str {
        self
    }
    fn to_owned_key(&self) -> String {
        self.to_owned()
    }
}

/// Small `Copy` values: looked up and kept as themselves.
macro_rules! value_keys {
    ($($ty:ty),*) => {$(
        impl AsKey for $ty {
            type Owned = $ty;
            type Lookup = $ty;
            #[inline]
            fn lookup(&self) -> &$ty {
                self
            }
            #[inline]
            fn to_owned_key(&self) -> $ty {
                *self
            }
        }
    )*};
}

value_keys!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    char,
    bool,
    IpAddr,
    Ipv4Addr,
    Ipv6Addr,
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6
);

/// Tuples of owned keys: looked up as the tuple, cloned when new.
macro_rules! tuple_keys {
    ($(($($t:ident),*)),*) => {$(
        impl<$($t: Clone + Hash + Eq + Debug + Send + Sync + 'static),*> AsKey for ($($t,)*) {
            type Owned = Self;
            type Lookup = Self;
            #[inline]
            fn lookup(&self) -> &Self {
                self
            }
            fn to_owned_key(&self) -> Self {
                self.clone()
            }
        }
    )*};
}

tuple_keys!((A, B), (A, B, C));
