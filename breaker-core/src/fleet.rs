//! What a fleet agent does to a local breaker when another instance trips,
//! probes or closes: [`FleetControl`], for store integrations such as
//! `breaker-fleet`, not for application code.

use std::time::Duration;

/// The operations a fleet agent applies to a [`Breaker`](crate::Breaker) on
/// what the fleet's store says. Implemented for `Breaker`; import it to call
/// them. An application forces and resets breakers with
/// [`Breaker::force_open`](crate::Breaker::force_open) and its siblings.
pub trait FleetControl {
    /// Opens the circuit because the fleet says so: for a fleet agent (such as
    /// `breaker-fleet`'s) that heard another instance trip. Returns whether it
    /// opened; a breaker forced open or closed by hand is left alone (`false`).
    ///
    /// From closed, open or half-open, the breaker enters a new generation,
    /// open for `remaining`: claims are refused with [`OpenReason::Fleet`](crate::OpenReason::Fleet) and a
    /// real `retry_after`; when `remaining` has passed, the next claim moves it
    /// to half-open and probes, as after a local trip (unless the agent moves
    /// that moment, [`fleet_hold`](Self::fleet_hold)). Outcomes of calls in
    /// flight become stale. Subscribers are told a
    /// [`TransitionReason::FleetOpen`](crate::events::TransitionReason::FleetOpen),
    /// which an agent knows for its own.
    ///
    /// The backoff is kept: a probe that fails later grows the open duration
    /// from the longer of `remaining` and the open duration this breaker had in
    /// an episode already under way (from closed: the configured one).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, ManualClock, OpenReason, State};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("db", Config::default(), clock.clone());
    /// assert!(breaker.fleet_open(Duration::from_secs(20)));
    /// let refused = breaker.try_acquire().unwrap_err();
    /// assert_eq!(refused.reason(), OpenReason::Fleet);
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(20)));
    /// clock.advance(Duration::from_secs(20));
    /// let probe = breaker.try_acquire().unwrap(); // the lazy half-open, as ever
    /// assert!(probe.is_probe());
    /// probe.success();
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    fn fleet_open(&self, remaining: Duration) -> bool;

    /// As [`fleet_open`](Self::fleet_open), for a breaker that refuses or
    /// probes now: open or half-open, it opens by the fleet for `remaining` in
    /// a new generation (a probe in flight turns stale); closed, it is left
    /// closed, even when it closes in the instant this runs (one of the two
    /// happens first, atomically). Returns whether it opened. For a fleet agent
    /// that could not [`fleet_hold`](Self::fleet_hold) a breaker whose open is
    /// ending, and must not reopen one whose own probe just closed it.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, ManualClock, OpenReason, State};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("db", Config::builder().threshold(1).build().unwrap(), clock.clone());
    /// assert!(!breaker.fleet_reopen(Duration::from_secs(5)), "closed: left closed");
    /// breaker.try_acquire().unwrap().failure();
    /// clock.advance(Duration::from_secs(30));
    /// let probe = breaker.try_acquire().unwrap(); // half-open
    /// assert!(breaker.fleet_reopen(Duration::from_secs(5)));
    /// probe.success(); // stale: the fleet's open stands
    /// assert_eq!(breaker.try_acquire().unwrap_err().reason(), OpenReason::Fleet);
    /// ```
    fn fleet_reopen(&self, remaining: Duration) -> bool;

    /// Closes the circuit because a probe on another instance closed it: open
    /// or half-open to closed, in a new generation, with a fresh policy, as a
    /// local probe's success closes it. Returns whether it closed; a closed
    /// breaker, and one forced by hand, is left alone. Subscribers are told a
    /// [`TransitionReason::FleetClose`](crate::events::TransitionReason::FleetClose).
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new("db", Config::default());
    /// assert!(!breaker.fleet_close(), "closed already");
    /// breaker.fleet_open(Duration::from_secs(20));
    /// assert!(breaker.fleet_close());
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    fn fleet_close(&self) -> bool;

    /// Withdraws the fleet's own open: as [`fleet_close`](Self::fleet_close),
    /// only when the breaker is open because the fleet opened it
    /// ([`is_fleet_open`](Self::is_fleet_open)), decided and done in one
    /// atomic step. A breaker that tripped on its own evidence since (its
    /// trip is on its way to the fleet), a keyed group's own trip, a
    /// half-open one probing, a closed one and one forced by hand are left
    /// alone (`false`). For a fleet agent whose own close the fleet took
    /// while it held the local breaker open.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, OpenReason, State};
    ///
    /// let breaker = Breaker::new("db", Config::builder().threshold(1).build().unwrap());
    /// breaker.fleet_open(Duration::from_secs(20));
    /// assert!(breaker.fleet_release());
    /// assert_eq!(breaker.state(), State::Closed);
    ///
    /// breaker.try_acquire().unwrap().failure(); // its own trip
    /// assert!(!breaker.fleet_release());
    /// assert_eq!(breaker.try_acquire().unwrap_err().reason(), OpenReason::Open);
    /// ```
    fn fleet_release(&self) -> bool;

    /// Whether the breaker is open because the fleet opened it
    /// ([`fleet_open`](Self::fleet_open), [`fleet_reopen`](Self::fleet_reopen))
    /// and has not moved since: not by its own trip, which a fleet agent
    /// publishes, and not half-open. A keyed group's own breaker, whose
    /// refusals say [`OpenReason::Group`](crate::OpenReason::Group) either
    /// way, tells the two apart only so.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let breaker = Breaker::new("db", Config::builder().threshold(1).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// assert!(!breaker.is_fleet_open(), "open by its own trip");
    /// breaker.fleet_open(Duration::from_secs(20));
    /// assert!(breaker.is_fleet_open());
    /// ```
    fn is_fleet_open(&self) -> bool;

    /// Moves the end of the current open (a local trip's or the fleet's) to
    /// `remaining` from now, in the same generation and with the same reason:
    /// no transition, nothing told. For a fleet agent that must keep this
    /// instance from probing while another holds the fleet's probe lease, or
    /// let it probe now (`Duration::ZERO`) when it won one.
    ///
    /// Returns whether it moved it: only an open breaker's end moves, and a
    /// later end only while the current one is more than a millisecond away,
    /// so that no claim is taking the half-open slot as it moves (a claim
    /// compares the end to a clock it read a moment before; only a thread
    /// stalled for longer than that millisecond between the check and the
    /// write, exactly as the old end passes, could still let one claim probe).
    /// A breaker whose open is over is left to probe; an agent that holds it
    /// past the fleet's end a little (`breaker-fleet` holds 200 ms) decides
    /// well before that.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("db", Config::default(), clock.clone());
    /// breaker.fleet_open(Duration::from_secs(20));
    /// assert!(breaker.fleet_hold(Duration::from_secs(25))); // until the lease is known
    /// clock.advance(Duration::from_secs(20));
    /// assert!(!breaker.would_admit());
    /// assert!(breaker.fleet_hold(Duration::ZERO)); // the lease is ours: probe
    /// assert!(breaker.try_acquire().unwrap().is_probe());
    /// ```
    fn fleet_hold(&self, remaining: Duration) -> bool;

    /// Holds the breaker because another instance took a group-scope hold (a
    /// provider's quota is every instance's): as
    /// [`Breaker::hold`](crate::Breaker::hold) with
    /// [`HoldScope::Group`](crate::HoldScope::Group), for `remaining` from now
    /// with no spread of its own (the instance that took it drew one), capped
    /// at `max_hold_ms`. A hold in force that ends as late or later is kept,
    /// and nothing is counted or told (`false`); otherwise the hold is
    /// counted and told as an [`Event::Held`](crate::events::Event::Held)
    /// whose `fleet` is set, so an agent does not publish it again.
    ///
    /// ```
    /// # use breaker_core as breakerbox;
    /// use std::time::Duration;
    /// use breakerbox::fleet::FleetControl;
    /// use breakerbox::{Breaker, Config, HoldScope, ManualClock, OpenReason};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = Breaker::with_clock("llm", Config::default(), clock.clone());
    /// assert!(breaker.fleet_group_hold(Duration::from_secs(30)));
    /// let refused = breaker.try_acquire().unwrap_err();
    /// assert_eq!(refused.reason(), OpenReason::Held(HoldScope::Group));
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(30)));
    /// assert!(!breaker.fleet_group_hold(Duration::from_secs(10)), "the later end stays");
    /// ```
    fn fleet_group_hold(&self, remaining: Duration) -> bool;
}
