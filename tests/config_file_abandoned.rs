//! `abandoned` from a file or a variable: a word, `"ignore"` or `"failure"`;
//! any other word is refused, naming the words it takes.
#![cfg(feature = "config")]

use breakerbox::config::Abandoned;
use breakerbox::config_file::{ErrorKind, Patch, Settings, Value};

#[test]
fn a_file_and_a_variable_set_what_abandoned_calls_count_as() {
    let text = "[defaults]\nabandoned = \"failure\"\n[groups.search]\nabandoned = \"ignore\"\n";
    let settings = Settings::from_toml_str(text, "app.toml")
        .unwrap()
        .with_env([("BREAKER_GROUPS__USERS__ABANDONED", "failure")])
        .unwrap();
    let abandoned = |group| {
        settings
            .resolve(group, &Patch::new())
            .unwrap()
            .config
            .abandoned()
    };
    assert_eq!(abandoned("search"), Abandoned::Ignore);
    assert_eq!(abandoned("users"), Abandoned::Failure);
    assert_eq!(abandoned("other"), Abandoned::Failure);
    let unset = Settings::from_toml_str("[defaults]\n", "app.toml").unwrap();
    let config = unset.resolve("other", &Patch::new()).unwrap().config;
    assert_eq!(config.abandoned(), Abandoned::Ignore, "the default");
}

#[test]
fn a_word_that_is_no_choice_is_refused_with_the_words() {
    for text in [
        "[defaults]\nabandoned = \"fail\"\n",
        "[defaults]\nabandoned = true\n",
        "[defaults]\nabandoned = 1\n",
    ] {
        let err = Settings::from_toml_str(text, "app.toml").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WrongType, "{err}");
        assert!(
            err.to_string()
                .contains("`abandoned` takes one of \"ignore\" or \"failure\""),
            "{err}"
        );
    }
    let err = Settings::new()
        .with_env([("BREAKER_DEFAULTS__ABANDONED", "Failure")])
        .unwrap_err();
    assert!(
        err.to_string().contains("BREAKER_DEFAULTS__ABANDONED"),
        "{err}"
    );
    assert!(err.to_string().contains("\"failure\""), "{err}");
}

#[test]
fn a_patch_takes_the_word_as_a_value() {
    let mut patch = Patch::new();
    patch
        .set(
            "abandoned",
            Value::Choice("failure"),
            breakerbox::config_file::Source::Attribute,
        )
        .unwrap();
    let config = patch.apply(breakerbox::Config::builder()).build().unwrap();
    assert_eq!(config.abandoned(), Abandoned::Failure);
}
