//! The tour's story (`--tour`): the acts and budget schedule of `assets/tour.toml`, embedded,
//! stretched to the demo's `--tour-frames` and scaled to its starting budget, with a caption per
//! act made from what the budget moved since the act began ([`Tally`]).

use std::time::Instant;

use mipflow::FrameStats;
use mipflow::Tally;

use crate::headless::Scenario;

/// `assets/tour.toml`, the same file `mipflow headless --scenario assets/tour.toml` runs.
pub const TOUR_TOML: &str = include_str!("../../../../assets/tour.toml");

/// The story while it plays.
#[derive(Debug)]
pub struct Story {
    scenario: Scenario,
    /// Demo frames per scenario frame.
    stretch: f64,
    /// The demo's frames per lap.
    lap: u64,
    act: Option<usize>,
    tally: Tally,
    prev: Option<FrameStats>,
    /// The act's title ("Act 2/4: ...").
    pub title: String,
    /// What the budget moved since the act began.
    pub line: String,
    formatted_at: Option<Instant>,
    /// The next frame starts the act's tally again from this budget (the base budget changed
    /// under it).
    rebase: Option<u64>,
}

impl Story {
    /// The story stretched to `tour_frames` demo frames per lap.
    pub fn new(tour_frames: u64) -> Result<Self, String> {
        let scenario = Scenario::parse(TOUR_TOML, std::path::Path::new("assets"))
            .map_err(|e| format!("assets/tour.toml: {e}"))?;
        let lap = scenario.tour_frames.unwrap_or(scenario.frames).max(1);
        Ok(Self {
            stretch: tour_frames.max(1) as f64 / lap as f64,
            lap: tour_frames.max(1),
            scenario,
            act: None,
            tally: Tally::default(),
            prev: None,
            title: String::new(),
            line: String::new(),
            formatted_at: None,
            rebase: None,
        })
    }

    /// The scenario frame of tour frame `k` (the story loops with the tour).
    fn scenario_frame(&self, k: u64) -> u64 {
        ((k % self.lap) as f64 / self.stretch) as u64
    }

    /// The budget at tour frame `k` for a story whose first budget is `base`, of which `fixed`
    /// is the window's own (swapchain, overlay, meshes: bytes the headless scenario does not
    /// have). The rest is scaled as the file's budgets are, so that each act presses the
    /// targets, staging and textures alike at any window size.
    pub fn budget(&self, k: u64, base: u64, fixed: u64) -> u64 {
        let first = self.scenario.budget_at(0).max(1) as f64;
        let now = self.scenario.budget_at(self.scenario_frame(k)) as f64;
        // Why at most half: a `--budget` below the window's own bytes would leave the story
        // nothing to scale (and `base - fixed` would underflow); half still squeezes.
        let fixed = fixed.min(base / 2);
        let room = (base - fixed) as f64 * now / first;
        (fixed as f64 + room).round().max(1.0) as u64
    }

    /// The base budget changed (the window was resized): the act's tally starts again from the
    /// next frame, so that its caption tells what the story did, not the resize.
    pub fn rebase(&mut self, act_budget: u64) {
        self.rebase = Some(act_budget);
    }

    /// Folds in the frame drawn at tour frame `k`. Returns the caption of an act that just ended
    /// (for `--monitor`).
    pub fn observe(&mut self, k: u64, stats: &FrameStats) -> Option<String> {
        let f = self.scenario_frame(k);
        let mut ended = None;
        if let Some((i, act)) = self.scenario.act_at(f)
            && self.act != Some(i)
        {
            if let Some(prev_act) = self.act {
                ended = Some(format!(
                    "act {}/{} done: {}",
                    prev_act + 1,
                    self.scenario.act.len(),
                    self.tally
                ));
            }
            self.act = Some(i);
            self.tally = Tally::start(self.prev.as_ref().unwrap_or(stats));
            self.title = format!("Act {}/{}: {}", i + 1, self.scenario.act.len(), act.title);
            self.formatted_at = None;
        }
        if let Some(b) = self.rebase.take() {
            self.tally = Tally::start(stats);
            self.tally.budget_from = b;
            self.tally.budget_to = b;
        } else {
            self.tally.add(stats);
        }
        self.prev = Some(*stats);
        // The caption is text: made a few times a second, not every frame.
        if self
            .formatted_at
            .is_none_or(|t| t.elapsed().as_secs_f32() >= 0.25)
        {
            self.line = self.tally.to_string();
            self.formatted_at = Some(Instant::now());
        }
        ended
    }

    /// The tally of the act under way.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_story_is_stretched_and_scaled() {
        let s = Story::new(1800).unwrap();
        // The file's lap is 600 frames, its budgets 18, 11, 3, 18 MiB from frames 0, 150, 300
        // and 450: at 1800 demo frames per lap, from 0, 450, 900, 1350.
        let base = 40 << 20;
        let at = |r: f64| (base as f64 * r).round() as u64;
        assert_eq!(s.budget(0, base, 0), base);
        assert_eq!(s.budget(449, base, 0), base);
        assert_eq!(s.budget(450, base, 0), at(11.0 / 18.0));
        assert_eq!(s.budget(900, base, 0), at(3.0 / 18.0));
        assert_eq!(s.budget(1350, base, 0), base);
        assert_eq!(s.budget(1800 + 450, base, 0), at(11.0 / 18.0), "it loops");
        // The window's own bytes stay; the rest is scaled.
        let fixed = 13 << 20;
        assert_eq!(
            s.budget(450, base, fixed),
            fixed + ((base - fixed) as f64 * 11.0 / 18.0).round() as u64
        );
    }

    #[test]
    fn acts_change_with_captions() {
        let mut s = Story::new(600).unwrap();
        let mut st = FrameStats {
            budget_bytes: 18 << 20,
            render_scale: 1.0,
            ..FrameStats::default()
        };
        assert!(s.observe(0, &st).is_none());
        assert!(s.title.starts_with("Act 1/4"), "{}", s.title);
        st.budget_bytes = 11 << 20;
        st.render_scale = 0.75;
        let ended = s.observe(150, &st).unwrap();
        assert!(
            ended.starts_with("act 1/4 done: budget 18.0 MiB"),
            "{ended}"
        );
        assert!(s.title.starts_with("Act 2/4"), "{}", s.title);
        assert!(
            s.line
                .starts_with("budget 18.0 -> 11.0 MiB: scale 1.00 -> 0.75"),
            "{}",
            s.line
        );
    }
}
