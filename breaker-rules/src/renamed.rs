//! Keys known by another name: the attribute, the file and the variables
//! answer a key's former name with the name to write instead.

/// Each former name of a key, with the key's name.
///
/// ```
/// assert!(breaker_rules::RENAMED.iter().all(|(_, key)| {
///     breaker_rules::NAMES.contains(key)
///         || breaker_rules::RETRY_NAMES.contains(key)
///         || *key == "key_capacity" // the attribute's, beside `key`
/// }));
/// ```
pub const RENAMED: [(&str, &str); 3] = [
    ("retry_backoff_ms", "retry_delay_ms"),
    ("retry_cap_ms", "retry_max_delay_ms"),
    ("max_keys", "key_capacity"),
];

/// The name of the key formerly called `name`, if it was one.
///
/// ```
/// assert_eq!(breaker_rules::renamed("retry_backoff_ms"), Some("retry_delay_ms"));
/// assert_eq!(breaker_rules::renamed("threshold"), None);
/// ```
pub fn renamed(name: &str) -> Option<&'static str> {
    RENAMED
        .iter()
        .find(|(former, _)| *former == name)
        .map(|(_, key)| *key)
}
