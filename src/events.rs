//! What the budget did, as events a person can read: budget changes, render-scale changes (with
//! the controller's reason and the render-target bytes they moved), waves of evictions and of
//! re-streaming, and the driver's out-of-memory errors.
//!
//! [`EventLog::observe`] takes each frame's [`FrameStats`]; it keeps the last [`EventLog::CAPACITY`]
//! events in a fixed ring (no allocation after [`EventLog::new`]). Related frames merge into one
//! event, so that a strip of events stays readable: a scale change continues the previous one
//! when it comes within [`MERGE_FRAMES`] frames in the same direction, and an eviction or a
//! re-streaming wave lasts while frames with that kind of work follow each other within
//! [`MERGE_FRAMES`] frames (at most [`MAX_WAVE_FRAMES`] frames per wave). The demo's overlay
//! strip, its `--monitor` lines, the captions of its tour and the headless plot's markers all
//! come from here; a game can show the same.
//!
//! [`Tally`] adds up what the budget moved over a span of frames (an act of the demo's tour).

use crate::manager::FrameStats;
use crate::resolution::ChangeReason;

/// Events kept.
pub(crate) const EVENT_CAPACITY: usize = 32;
/// Frames within which related events merge.
pub const MERGE_FRAMES: u64 = 30;
/// Longest wave, in frames (a camera that keeps moving under a pressed budget evicts and
/// re-streams all the time: the strip shows it as one wave per this many frames).
pub const MAX_WAVE_FRAMES: u64 = 120;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventKind {
    /// The budget was set to another value.
    Budget {
        /// Bytes before.
        from: u64,
        /// Bytes after.
        to: u64,
    },
    /// The render scale changed (merged while changes in one direction follow each other).
    Scale {
        /// Scale per axis before.
        from: f32,
        /// Scale per axis after.
        to: f32,
        /// The controller's reason for the last change merged in.
        reason: Option<ChangeReason>,
        /// Render-target bytes before.
        target_bytes_from: u64,
        /// Render-target bytes after.
        target_bytes_to: u64,
    },
    /// Textures gave up levels (shrinks and evictions).
    Evictions {
        /// Shrinks and evictions.
        textures: u32,
        /// Bytes they gave back.
        bytes: u64,
    },
    /// Textures gained levels.
    Restreams {
        /// Grows completed.
        textures: u32,
        /// Bytes uploaded.
        bytes: u64,
    },
    /// The driver refused an allocation below the budget.
    OutOfMemory {
        /// Errors.
        count: u32,
        /// The effective budget the errors set, if known.
        cap_bytes: Option<u64>,
    },
}

impl EventKind {
    /// A short name: `budget`, `scale`, `evictions`, `restreams`, `out_of_memory`.
    pub const fn name(&self) -> &'static str {
        match self {
            EventKind::Budget { .. } => "budget",
            EventKind::Scale { .. } => "scale",
            EventKind::Evictions { .. } => "evictions",
            EventKind::Restreams { .. } => "restreams",
            EventKind::OutOfMemory { .. } => "out_of_memory",
        }
    }
}

/// One event: its first and last frame and what happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Frame it started.
    pub frame: u64,
    /// Last frame merged into it.
    pub last_frame: u64,
    /// What.
    pub kind: EventKind,
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// A reason in words.
pub fn reason_text(r: ChangeReason) -> &'static str {
    match r {
        ChangeReason::MemoryDown => "the budget could not hold the targets and the view's mips",
        ChangeReason::MemoryUp => "memory came back",
        ChangeReason::GpuTimeDown => "GPU frame time over target",
        ChangeReason::GpuTimeUp => "GPU frame time has room",
        ChangeReason::CpuTimeDown => "frame time over target",
        ChangeReason::CpuTimeUp => "frame time has room",
        ChangeReason::Manual => "set by hand",
        ChangeReason::Config => "the scale range changed",
    }
}

impl std::fmt::Display for Event {
    /// One line: what moved, how many bytes, why.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            EventKind::Budget { from, to } => {
                write!(f, "budget {:.1} -> {:.1} MiB", mib(from), mib(to))
            }
            EventKind::Scale {
                from,
                to,
                reason,
                target_bytes_from,
                target_bytes_to,
            } => {
                let (verb, bytes) = if target_bytes_to <= target_bytes_from {
                    ("frees", target_bytes_from - target_bytes_to)
                } else {
                    ("takes", target_bytes_to - target_bytes_from)
                };
                write!(
                    f,
                    "scale {from:.2} -> {to:.2}: {verb} {:.1} MiB of targets",
                    mib(bytes)
                )?;
                if let Some(r) = reason {
                    write!(f, " ({})", reason_text(r))?;
                }
                Ok(())
            }
            EventKind::Evictions { textures, bytes } => write!(
                f,
                "{textures} level drops gave back {:.1} MiB (the budget needed the room)",
                mib(bytes)
            ),
            EventKind::Restreams { textures, bytes } => write!(
                f,
                "{textures} textures streamed finer levels, {:.1} MiB (the view wants them)",
                mib(bytes)
            ),
            EventKind::OutOfMemory { count, cap_bytes } => {
                write!(f, "driver out of memory x{count}")?;
                if let Some(c) = cap_bytes {
                    write!(f, ": effective budget {:.1} MiB", mib(c))?;
                }
                Ok(())
            }
        }
    }
}

/// The previous frame's figures the next frame is compared with.
#[derive(Clone, Copy, Debug)]
struct Prev {
    budget: u64,
    scale: f32,
    target_bytes: u64,
}

/// The last [`EventLog::CAPACITY`] events, from each frame's [`FrameStats`].
#[derive(Clone, Debug)]
pub struct EventLog {
    ring: [Option<Event>; EVENT_CAPACITY],
    /// Events ever pushed (merges do not count).
    pushed: u64,
    /// Ring positions of the open scale change and waves.
    open_scale: Option<usize>,
    open_evict: Option<usize>,
    open_restream: Option<usize>,
    prev: Option<Prev>,
    /// Bumped on every push and every merge.
    version: u64,
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLog {
    /// How many events the log keeps: the newest, once more were pushed.
    pub const CAPACITY: usize = EVENT_CAPACITY;

    /// An empty log.
    pub fn new() -> Self {
        Self {
            ring: [None; EVENT_CAPACITY],
            pushed: 0,
            open_scale: None,
            open_evict: None,
            open_restream: None,
            prev: None,
            version: 0,
        }
    }

    /// Events ever started (a consumer that remembers it knows which are new).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Changes on every new event and every merge (to redraw or reprint only then).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The event with sequence number `n` (0 = the first ever pushed), while still in the ring.
    pub fn get(&self, n: u64) -> Option<&Event> {
        if n >= self.pushed || self.pushed - n > EVENT_CAPACITY as u64 {
            return None;
        }
        self.ring[(n % EVENT_CAPACITY as u64) as usize].as_ref()
    }

    /// Whether event `n` can still grow at frames after `frame`: a scale change or a wave that
    /// is still open and within 30 frames of its last frame. Budget changes and
    /// out-of-memory errors are final at once. (Print an event once it is final.)
    pub fn is_final(&self, n: u64, frame: u64) -> bool {
        let at = (n % EVENT_CAPACITY as u64) as usize;
        let open = [self.open_scale, self.open_evict, self.open_restream].contains(&Some(at));
        match self.get(n) {
            None => true,
            Some(e) => {
                let wave = matches!(
                    e.kind,
                    EventKind::Evictions { .. } | EventKind::Restreams { .. }
                );
                let lasting = wave || matches!(e.kind, EventKind::Scale { .. });
                !lasting
                    || !open
                    || frame > e.last_frame + MERGE_FRAMES
                    || (wave && frame + 1 >= e.frame + MAX_WAVE_FRAMES)
            }
        }
    }

    /// The events still held, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Event> + '_ {
        let first = self.pushed.saturating_sub(EVENT_CAPACITY as u64);
        (first..self.pushed).filter_map(move |n| self.get(n))
    }

    fn push(&mut self, e: Event) -> usize {
        let at = (self.pushed % EVENT_CAPACITY as u64) as usize;
        // A slot reused: whatever was open there is closed.
        for open in [
            &mut self.open_scale,
            &mut self.open_evict,
            &mut self.open_restream,
        ] {
            if *open == Some(at) {
                *open = None;
            }
        }
        self.ring[at] = Some(e);
        self.pushed += 1;
        self.version += 1;
        at
    }

    /// Folds one frame in. Allocation-free.
    pub fn observe(&mut self, s: &FrameStats) {
        if s.skipped {
            return;
        }
        let frame = s.frame;
        let target_bytes = s.ledger.by_category.render_targets.bytes;
        let now = Prev {
            budget: s.budget_bytes,
            scale: s.render_scale,
            target_bytes,
        };
        let Some(prev) = self.prev.replace(now) else {
            return;
        };
        if prev.budget != s.budget_bytes {
            self.push(Event {
                frame,
                last_frame: frame,
                kind: EventKind::Budget {
                    from: prev.budget,
                    to: s.budget_bytes,
                },
            });
        }
        if prev.scale != s.render_scale {
            self.scale(frame, prev, now, s.scale_reason);
        }
        let st = &s.stream;
        let drops = st.shrinks + st.evictions;
        if drops > 0 {
            self.wave(frame, true, drops, st.freed_bytes);
        }
        if st.grows > 0 {
            self.wave(frame, false, st.grows, st.uploaded_bytes);
        } else if st.uploaded_bytes > 0
            && let Some(at) = self.open_restream
            && let Some(e) = self.ring[at].as_mut()
            && frame <= e.last_frame + MERGE_FRAMES
            && frame < e.frame + MAX_WAVE_FRAMES
            && let EventKind::Restreams { bytes, .. } = &mut e.kind
        {
            // Steps of grows still under way: their bytes belong to the wave while it is open
            // (past it, the wave was final, and printed so: a late step reopened it, and the
            // next grows merged into an event already told).
            *bytes += st.uploaded_bytes;
            e.last_frame = frame;
            self.version += 1;
        }
        if st.oom_events > 0 {
            self.push(Event {
                frame,
                last_frame: frame,
                kind: EventKind::OutOfMemory {
                    count: st.oom_events,
                    cap_bytes: s.oom_cap_bytes,
                },
            });
        }
    }

    fn scale(&mut self, frame: u64, prev: Prev, now: Prev, reason: Option<ChangeReason>) {
        let down = now.scale < prev.scale;
        if let Some(at) = self.open_scale
            && let Some(e) = self.ring[at].as_mut()
            && let EventKind::Scale {
                from,
                to,
                reason: r,
                target_bytes_to,
                ..
            } = &mut e.kind
            && frame <= e.last_frame + MERGE_FRAMES
            && (*to < *from) == down
        {
            *to = now.scale;
            *target_bytes_to = now.target_bytes;
            if reason.is_some() {
                *r = reason;
            }
            e.last_frame = frame;
            self.version += 1;
            return;
        }
        let at = self.push(Event {
            frame,
            last_frame: frame,
            kind: EventKind::Scale {
                from: prev.scale,
                to: now.scale,
                reason,
                target_bytes_from: prev.target_bytes,
                target_bytes_to: now.target_bytes,
            },
        });
        self.open_scale = Some(at);
    }

    fn wave(&mut self, frame: u64, evict: bool, count: u32, add: u64) {
        let open = if evict {
            self.open_evict
        } else {
            self.open_restream
        };
        if let Some(at) = open
            && let Some(e) = self.ring[at].as_mut()
            && frame <= e.last_frame + MERGE_FRAMES
            && frame < e.frame + MAX_WAVE_FRAMES
        {
            match &mut e.kind {
                EventKind::Evictions { textures, bytes }
                | EventKind::Restreams { textures, bytes } => {
                    *textures = textures.saturating_add(count);
                    *bytes += add;
                }
                _ => {}
            }
            e.last_frame = frame;
            self.version += 1;
            return;
        }
        let kind = if evict {
            EventKind::Evictions {
                textures: count,
                bytes: add,
            }
        } else {
            EventKind::Restreams {
                textures: count,
                bytes: add,
            }
        };
        let at = self.push(Event {
            frame,
            last_frame: frame,
            kind,
        });
        if evict {
            self.open_evict = Some(at);
        } else {
            self.open_restream = Some(at);
        }
    }
}

/// What the budget moved over a span of frames: from [`Tally::start`] to the last
/// [`Tally::add`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Frames added.
    pub frames: u64,
    /// Budget at the start.
    pub budget_from: u64,
    /// Budget now.
    pub budget_to: u64,
    /// Render scale at the start.
    pub scale_from: f32,
    /// Lowest render scale seen.
    pub scale_min: f32,
    /// Render scale now.
    pub scale_to: f32,
    /// Render-target bytes at the start.
    pub target_bytes_from: u64,
    /// Fewest render-target bytes seen.
    pub target_bytes_min: u64,
    /// Render-target bytes now.
    pub target_bytes_to: u64,
    /// Level drops (shrinks and evictions).
    pub drops: u64,
    /// Bytes they gave back.
    pub dropped_bytes: u64,
    /// Grows completed.
    pub grows: u64,
    /// Bytes uploaded.
    pub uploaded_bytes: u64,
}

impl Tally {
    /// A tally starting from the figures of `s` (the frame before the span).
    pub fn start(s: &FrameStats) -> Self {
        let t = s.ledger.by_category.render_targets.bytes;
        Self {
            frames: 0,
            budget_from: s.budget_bytes,
            budget_to: s.budget_bytes,
            scale_from: s.render_scale,
            scale_min: s.render_scale,
            scale_to: s.render_scale,
            target_bytes_from: t,
            target_bytes_min: t,
            target_bytes_to: t,
            ..Self::default()
        }
    }

    /// Adds a frame.
    pub fn add(&mut self, s: &FrameStats) {
        if s.skipped {
            return;
        }
        let t = s.ledger.by_category.render_targets.bytes;
        self.frames += 1;
        self.budget_to = s.budget_bytes;
        self.scale_to = s.render_scale;
        self.scale_min = self.scale_min.min(s.render_scale);
        self.target_bytes_to = t;
        self.target_bytes_min = self.target_bytes_min.min(t);
        self.drops += u64::from(s.stream.shrinks + s.stream.evictions);
        self.dropped_bytes += s.stream.freed_bytes;
        self.grows += u64::from(s.stream.grows);
        self.uploaded_bytes += s.stream.uploaded_bytes;
    }
}

impl std::fmt::Display for Tally {
    /// "budget 48.0 -> 20.0 MiB: scale 1.00 -> 0.69 frees 7.4 MiB of targets; 23 level drops
    /// (6.1 MiB); 4 grows (1.2 MiB)".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.budget_from == self.budget_to {
            write!(f, "budget {:.1} MiB", mib(self.budget_to))?;
        } else {
            write!(
                f,
                "budget {:.1} -> {:.1} MiB",
                mib(self.budget_from),
                mib(self.budget_to)
            )?;
        }
        if self.scale_min < self.scale_from {
            write!(
                f,
                ": scale {:.2} -> {:.2} frees {:.1} MiB of targets",
                self.scale_from,
                self.scale_min,
                mib(self.target_bytes_from.saturating_sub(self.target_bytes_min))
            )?;
            if self.scale_to > self.scale_min {
                write!(f, ", back to {:.2}", self.scale_to)?;
            }
        } else if self.scale_to > self.scale_from {
            write!(
                f,
                ": scale {:.2} -> {:.2} takes {:.1} MiB of targets",
                self.scale_from,
                self.scale_to,
                mib(self.target_bytes_to.saturating_sub(self.target_bytes_from))
            )?;
        } else {
            write!(f, ": scale {:.2}", self.scale_to)?;
        }
        write!(
            f,
            "; {} level drops ({:.1} MiB); {} grows ({:.1} MiB streamed)",
            self.drops,
            mib(self.dropped_bytes),
            self.grows,
            mib(self.uploaded_bytes)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(frame: u64, budget: u64, scale: f32, targets: u64) -> FrameStats {
        let mut s = FrameStats {
            frame,
            budget_bytes: budget,
            render_scale: scale,
            ..FrameStats::default()
        };
        s.ledger.by_category.render_targets.bytes = targets;
        s
    }

    #[test]
    fn budget_scale_and_waves_become_events() {
        let mut log = EventLog::new();
        log.observe(&stats(1, 100, 1.0, 40));
        assert_eq!(log.pushed(), 0, "the first frame is the baseline");
        let mut s = stats(2, 50, 1.0, 40);
        s.stream.shrinks = 3;
        s.stream.freed_bytes = 7;
        log.observe(&s);
        let mut s = stats(3, 50, 0.8, 26);
        s.scale_reason = Some(ChangeReason::MemoryDown);
        s.stream.evictions = 2;
        s.stream.freed_bytes = 5;
        log.observe(&s);
        log.observe(&stats(4, 50, 0.7, 20));
        let kinds: Vec<_> = log.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::Budget { from: 100, to: 50 },
                EventKind::Evictions {
                    textures: 5,
                    bytes: 12
                },
                EventKind::Scale {
                    from: 1.0,
                    to: 0.7,
                    reason: Some(ChangeReason::MemoryDown),
                    target_bytes_from: 40,
                    target_bytes_to: 20
                },
            ]
        );
        let text = log.iter().nth(2).unwrap().to_string();
        assert!(
            text.starts_with("scale 1.00 -> 0.70: frees 0.0 MiB"),
            "{text}"
        );
        // Up again: a new event, not a merge into the down-move.
        log.observe(&stats(5, 50, 1.0, 40));
        assert_eq!(log.pushed(), 4);
        // Budget changes are final at once; the wave of frame 2 until MERGE_FRAMES quiet frames.
        assert!(log.is_final(0, 5));
        assert!(!log.is_final(1, 5));
        assert!(log.is_final(1, 3 + MERGE_FRAMES + 1));
        // A wave ends after MERGE_FRAMES quiet frames.
        let mut s = stats(5 + MERGE_FRAMES + 1, 50, 1.0, 40);
        s.stream.shrinks = 1;
        log.observe(&s);
        assert_eq!(log.pushed(), 5);
    }

    /// A restreaming wave once final (MERGE_FRAMES quiet frames: printed by `--monitor` and
    /// the demo) stays as it was: a late step's uploaded bytes do not reopen it, and the grows
    /// after them start a new wave (before, the bytes extended it with no merge check and the
    /// next grows joined an event already told).
    #[test]
    fn a_final_wave_is_not_reopened_by_late_steps() {
        let mut log = EventLog::new();
        log.observe(&stats(1, 100, 1.0, 40));
        let mut s = stats(2, 100, 1.0, 40);
        s.stream.grows = 4;
        s.stream.uploaded_bytes = 10;
        log.observe(&s);
        let late = 2 + MERGE_FRAMES + 1;
        assert!(log.is_final(0, late));
        let mut s = stats(late, 100, 1.0, 40);
        s.stream.uploaded_bytes = 3;
        log.observe(&s);
        let mut s = stats(late + 5, 100, 1.0, 40);
        s.stream.grows = 1;
        s.stream.uploaded_bytes = 2;
        log.observe(&s);
        let waves: Vec<_> = log
            .iter()
            .map(|e| (e.frame, e.last_frame, e.kind))
            .collect();
        assert_eq!(
            waves,
            vec![
                (
                    2,
                    2,
                    EventKind::Restreams {
                        textures: 4,
                        bytes: 10
                    }
                ),
                (
                    late + 5,
                    late + 5,
                    EventKind::Restreams {
                        textures: 1,
                        bytes: 2
                    }
                ),
            ]
        );
        // Steps within the open wave still count in it.
        let mut s = stats(late + 6, 100, 1.0, 40);
        s.stream.uploaded_bytes = 5;
        log.observe(&s);
        assert_eq!(
            log.iter().last().map(|e| (e.last_frame, e.kind)),
            Some((
                late + 6,
                EventKind::Restreams {
                    textures: 1,
                    bytes: 7
                }
            ))
        );
    }

    #[test]
    fn the_ring_keeps_the_last_events() {
        let mut log = EventLog::new();
        log.observe(&stats(1, 0, 1.0, 0));
        for f in 2..100u64 {
            log.observe(&stats(f, f, 1.0, 0));
        }
        assert_eq!(log.pushed(), 98);
        assert_eq!(log.iter().count(), EVENT_CAPACITY);
        assert_eq!(
            log.iter().last().unwrap().kind,
            EventKind::Budget { from: 98, to: 99 }
        );
        assert!(log.get(0).is_none());
    }

    #[test]
    fn a_tally_reads_as_a_caption() {
        let mut t = Tally::start(&stats(1, 48 << 20, 1.0, 20 << 20));
        let mut s = stats(2, 20 << 20, 0.69, (20 << 20) - (7 << 20));
        s.stream.shrinks = 23;
        s.stream.freed_bytes = 6 << 20;
        t.add(&s);
        assert_eq!(
            t.to_string(),
            "budget 48.0 -> 20.0 MiB: scale 1.00 -> 0.69 frees 7.0 MiB of targets; 23 level drops (6.0 MiB); 0 grows (0.0 MiB streamed)"
        );
    }
}
