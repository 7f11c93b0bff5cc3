//! Reads `BREAKER_<TABLE>__<NAME>__<KEY>` variables into [`Settings`]: each one
//! edits the table it names, checked like a file key.

use super::duration::parse_millis;
use super::error::{list, suggest, suggest_key, Error, ErrorKind};
use super::patch::{check_alone, key_index, keys, takes, Patch, Source, Ty, Value, KEYS};
use super::Settings;

/// Every variable of the scheme starts with this.
pub const PREFIX: &str = "BREAKER_";
/// The variable that names the file: `BREAKER_CONFIG=path/to/file.toml`.
pub const CONFIG_VAR: &str = "BREAKER_CONFIG";

/// How a group or template name is spelled inside a variable name: ASCII
/// letters upper-cased, digits kept, every other character (`-`, `.`, `_`,
/// anything non-ASCII) written `_`.
///
/// ```
/// use breakerbox::config_file::env_name;
///
/// assert_eq!(env_name("search"), "SEARCH");
/// assert_eq!(env_name("user-profile.v2"), "USER_PROFILE_V2");
/// ```
pub fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

const TABLES: [&str; 3] = ["DEFAULTS", "TEMPLATES", "GROUPS"];

/// Which table a variable edits.
enum Target<'a> {
    Defaults,
    Template(&'a str),
    Group(&'a str),
}

/// Applies every variable of the scheme to `settings`; the first bad one
/// refuses them all (the caller drops the half-edited copy).
pub(crate) fn apply(settings: &mut Settings, vars: &[(String, String)]) -> Result<(), Error> {
    for (var, text) in vars {
        let Some(rest) = var.strip_prefix(PREFIX) else {
            continue;
        };
        // `BREAKER_CONFIG` names the file; a `BREAKER_` name without `__` is
        // some other tool's (or another part of breaker's) and not ours.
        if var == CONFIG_VAR || !rest.contains("__") {
            continue;
        }
        let bad = |kind, what: String| Error::new(kind, format!("variable `{var}`: {what}"));
        let shape = "variables are named `BREAKER_DEFAULTS__<KEY>`, \
                     `BREAKER_TEMPLATES__<NAME>__<KEY>` or `BREAKER_GROUPS__<NAME>__<KEY>`";
        let (table, tail) = rest.split_once("__").expect("checked above");
        let (target, key) = match table.to_ascii_uppercase().as_str() {
            "DEFAULTS" if !tail.contains("__") => (Target::Defaults, tail),
            "DEFAULTS" => {
                return Err(bad(
                    ErrorKind::BadVariable,
                    format!("[defaults] has no NAME; {shape}"),
                ))
            }
            "TEMPLATES" | "GROUPS" => match tail.rsplit_once("__") {
                Some((name, key)) if !name.is_empty() && !key.is_empty() => {
                    if table.eq_ignore_ascii_case("GROUPS") {
                        (Target::Group(name), key)
                    } else {
                        (Target::Template(name), key)
                    }
                }
                _ => {
                    return Err(bad(
                        ErrorKind::BadVariable,
                        format!("missing the NAME or the KEY; {shape}"),
                    ))
                }
            },
            _ => {
                return Err(bad(
                    ErrorKind::BadVariable,
                    format!(
                        "unknown table `{table}`{}; {shape}",
                        suggest(table, TABLES.into_iter())
                    ),
                ))
            }
        };
        let key = key.to_ascii_lowercase();
        let Some(index) = key_index(&key) else {
            let why = if key == "template" {
                "a group's template is chosen in the file, not by a variable".to_owned()
            } else {
                format!(
                    "unknown key `{}`{}; allowed keys (upper-case in the name): {}",
                    key.to_ascii_uppercase(),
                    suggest_key(&key, keys()),
                    list(keys())
                )
            };
            return Err(bad(ErrorKind::UnknownKey, why));
        };
        let ty = KEYS[index].ty;
        if ty == Ty::U64 {
            if let Err(why) = parse_millis(text) {
                return Err(bad(
                    ErrorKind::WrongType,
                    format!(
                        "`{text}` is not a value for `{key}`, which takes {}: {why}",
                        takes(index)
                    ),
                ));
            }
        }
        let Some(value) = Value::parse(ty, text) else {
            return Err(bad(
                ErrorKind::WrongType,
                format!(
                    "`{text}` is not a value for `{key}`, which takes {}",
                    takes(index)
                ),
            ));
        };
        if let Err(e) = check_alone(index, value) {
            return Err(bad(ErrorKind::Refused, format!("`{text}` is refused: {e}")));
        }
        let patch =
            target_patch(settings, &target).map_err(|what| bad(ErrorKind::BadVariable, what))?;
        if let Some(Source::Env { var: first }) = patch.at(index).map(|s| &s.source) {
            return Err(bad(
                ErrorKind::BadVariable,
                format!("`{key}` of the same table is also set by `{first}`; keep one"),
            ));
        }
        patch.put(index, value, Source::Env { var: var.clone() });
    }
    settings.check_tables()
}

/// The patch a variable edits: `[defaults]`, a template of the file, or the
/// variables of one group (matched to groups by [`env_name`] when resolving).
fn target_patch<'s>(
    settings: &'s mut Settings,
    target: &Target<'_>,
) -> Result<&'s mut Patch, String> {
    match *target {
        Target::Defaults => Ok(&mut settings.defaults),
        Target::Template(name) => {
            let matches: Vec<String> = settings
                .templates
                .keys()
                .filter(|t| env_name(t) == name.to_ascii_uppercase())
                .cloned()
                .collect();
            match matches.as_slice() {
                [one] => Ok(settings.templates.get_mut(one).expect("listed above")),
                [] => Err(format!(
                    "no template of the file is named `{name}` (as spelled in a variable); {}",
                    if settings.templates.is_empty() {
                        "the file defines no template".to_owned()
                    } else {
                        format!(
                            "templates: {}",
                            list(settings.templates.keys().map(String::as_str))
                        )
                    }
                )),
                many => Err(format!(
                    "`{name}` could be any of the templates {}; rename them apart",
                    list(many.iter().map(String::as_str))
                )),
            }
        }
        Target::Group(name) => {
            let form = name.to_ascii_uppercase();
            let same: Vec<&str> = settings
                .groups
                .keys()
                .filter(|g| env_name(g) == form)
                .map(String::as_str)
                .collect();
            if same.len() > 1 {
                return Err(format!(
                    "`{name}` could be any of the groups {} of the file; rename them apart",
                    list(same.into_iter())
                ));
            }
            Ok(settings.env_groups.entry(form).or_default())
        }
    }
}
