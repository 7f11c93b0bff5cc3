//! The open-duration jitter (`jitter`): SplitMix64 keyed by the breaker and
//! counted by its generation, drawn once per trip (never per refused call), that
//! stretches or shortens each open by a uniformly random share of at most
//! `jitter`. It keeps no state of its own: the generation, which every trip
//! moves on, is the generator's counter.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use crate::clock::ClockSource;

/// SplitMix64's step: the fractional part of the golden ratio, odd.
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// `base` nanos stretched or shortened by a uniformly random factor in
/// `[1 - jitter, 1 + jitter]`, at least 1 ns, for the breaker `name` (a keyed
/// group's key: `salt`, its hash) on `clock` in `generation`; `base` itself,
/// drawing nothing, when `jitter` is 0.
///
/// The draw is keyed by the clock's [`jitter_seed`](crate::Clock::jitter_seed),
/// the name and the salt, so a test's breakers draw the same durations on every run;
/// without a seed, by a key drawn once per process from its random hasher
/// keys, so two processes do not open in step.
pub(super) fn apply(
    base: u64,
    jitter: f64,
    name: &str,
    salt: u64,
    clock: &ClockSource,
    generation: u64,
) -> u64 {
    if jitter == 0.0 {
        return base;
    }
    let key = match clock.jitter_seed() {
        Some(seed) => seed,
        None => process_key(),
    } ^ fnv1a(name)
        ^ salt;
    stretch(
        base,
        jitter,
        mix(key.wrapping_add(generation.wrapping_mul(STEP))),
    )
}

/// A retry's delay: uniform in `[0, ceiling]` ("full jitter"), the `draw`-th
/// of the breaker `name` on `clock`, keyed as [`apply`]'s draws are (and apart
/// from them, so a retry never draws what a trip did).
pub(super) fn full(ceiling: u64, name: &str, clock: &ClockSource, draw: u64) -> u64 {
    let key = match clock.jitter_seed() {
        Some(seed) => seed,
        None => process_key(),
    } ^ fnv1a(name)
        ^ RETRY_SALT;
    let bits = mix(key.wrapping_add(draw.wrapping_mul(STEP)));
    // The high half of `bits × (ceiling + 1)`: uniform in `[0, ceiling]`.
    ((u128::from(bits) * (u128::from(ceiling) + 1)) >> 64) as u64
}

/// Mixed into the key of retry draws.
const RETRY_SALT: u64 = 0x5245_5452_5921_0001;

/// A hold's release spread: uniform in `[0, ceiling]`, the `draw`-th of the
/// breaker `name` (a keyed group's key: `salt`, its hash) on `clock`, keyed
/// as [`apply`]'s draws are (and apart from them and from retries').
pub(super) fn spread(ceiling: u64, name: &str, salt: u64, clock: &ClockSource, draw: u64) -> u64 {
    let key = match clock.jitter_seed() {
        Some(seed) => seed,
        None => process_key(),
    } ^ fnv1a(name)
        ^ salt
        ^ HOLD_SALT;
    let bits = mix(key.wrapping_add(draw.wrapping_mul(STEP)));
    ((u128::from(bits) * (u128::from(ceiling) + 1)) >> 64) as u64
}

/// Mixed into the key of a hold's release draws.
const HOLD_SALT: u64 = 0x484f_4c44_5245_4c01;

/// A random key, the same for the whole process.
fn process_key() -> u64 {
    static KEY: OnceLock<u64> = OnceLock::new();
    *KEY.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(STEP))
}

/// `base` times `1 - jitter + 2 * jitter * u`, `u` the top 53 bits of `bits`
/// as a share of one, in `[0, 1)`. Saturates at `u64::MAX`; at least 1.
fn stretch(base: u64, jitter: f64, bits: u64) -> u64 {
    let unit = (bits >> 11) as f64 / (1u64 << 53) as f64;
    let factor = 1.0 - jitter + 2.0 * jitter * unit;
    // `as` from f64 saturates; the factor is positive (jitter is below 1).
    ((base as f64 * factor) as u64).max(1)
}

/// SplitMix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of `text`: a fixed hash, the same on every run and platform.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xCBF2_9CE4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extremes_of_a_draw_are_the_ends_of_the_range() {
        let base = 10_000_000_000;
        assert_eq!(stretch(base, 0.2, 0), 8_000_000_000);
        let top = stretch(base, 0.2, u64::MAX);
        assert!(top <= 12_000_000_000 && top > 11_999_990_000, "{top}");
        assert_eq!(stretch(u64::MAX, 0.2, u64::MAX), u64::MAX);
        assert_eq!(stretch(1, 0.9, 0), 1);
    }

    #[test]
    fn no_jitter_keeps_the_duration_and_a_seeded_draw_repeats() {
        let clock = ClockSource::of(crate::ManualClock::new());
        assert_eq!(apply(5_000, 0.0, "g", 0, &clock, 3), 5_000);
        let draws: Vec<u64> = (0..64)
            .map(|g| apply(1_000_000, 0.5, "g", 0, &clock, g))
            .collect();
        let again: Vec<u64> = (0..64)
            .map(|g| apply(1_000_000, 0.5, "g", 0, &clock, g))
            .collect();
        assert_eq!(draws, again);
        assert!(
            draws.iter().all(|d| (500_000..1_500_000).contains(d)),
            "{draws:?}"
        );
        let other: Vec<u64> = (0..64)
            .map(|g| apply(1_000_000, 0.5, "h", 0, &clock, g))
            .collect();
        assert_ne!(draws, other, "another group draws apart");
    }
}
