//! What a budget test runs: its frames, the budget schedule, the assertions and the acts, in
//! the vocabulary of `mipflow headless` scenarios (`[[budget]]`, `[[expect]]`, `[[act]]`). The
//! types deserialize from the same TOML or JSON keys, or are built as data.

use serde::Deserialize;

use crate::{Error, Result, parse_size};

/// A byte size: a number or a string such as `"256MiB"`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SizeValue {
    /// Plain bytes.
    Bytes(u64),
    /// Text with a unit.
    Text(String),
}

impl SizeValue {
    /// The bytes.
    pub fn bytes(&self) -> Result<u64> {
        match self {
            SizeValue::Bytes(b) => Ok(*b),
            SizeValue::Text(t) => parse_size(t),
        }
    }
}

impl From<u64> for SizeValue {
    fn from(bytes: u64) -> Self {
        SizeValue::Bytes(bytes)
    }
}

/// A budget from `frame` on.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetKey {
    /// First frame of this budget.
    pub frame: u64,
    /// The budget.
    pub bytes: SizeValue,
}

impl BudgetKey {
    /// The budget in force at `frame` under `keys` (256 MiB before the first).
    pub fn at(keys: &[BudgetKey], frame: u64) -> u64 {
        keys.iter()
            .filter(|k| k.frame <= frame)
            .max_by_key(|k| k.frame)
            .and_then(|k| k.bytes.bytes().ok())
            .unwrap_or(256 << 20)
    }

    /// The highest budget of `keys` (256 MiB without any).
    pub fn max(keys: &[BudgetKey]) -> u64 {
        keys.iter()
            .filter_map(|k| k.bytes.bytes().ok())
            .max()
            .unwrap_or(256 << 20)
    }
}

/// Assertions checked at `frame` (or, for `max_violations`, over the whole run).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Frame the point assertions are checked at.
    pub frame: u64,
    /// The render scale must be at least this.
    pub min_render_scale: Option<f64>,
    /// The render scale must be at most this.
    pub max_render_scale: Option<f64>,
    /// Every visible texture has its wanted level resident.
    pub all_wanted_resident: Option<bool>,
    /// The ledger total is at most this at `frame`.
    pub max_total_bytes: Option<SizeValue>,
    /// At most this many frames over budget in the whole run (the verdict already requires 0
    /// unless this says otherwise, e.g. for a scenario that expects a too-small budget).
    pub max_violations: Option<u64>,
    /// The planner must (true) or must not (false) have reported the budget too small by `frame`.
    pub budget_too_small: Option<bool>,
}

/// An act of a story: a title from `frame` on.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Act {
    /// First frame of the act.
    pub frame: u64,
    /// What it shows ("the squeeze: half the budget").
    pub title: String,
}

impl Act {
    /// The act of `acts` in force at `frame` and its index, if any.
    pub fn at(acts: &[Act], frame: u64) -> Option<(usize, &Act)> {
        acts.iter()
            .enumerate()
            .rev()
            .find(|(_, a)| a.frame <= frame)
    }
}

/// A budget test's schedule: how many frames, the budget from each key's frame on (256 MiB
/// before the first), what to assert, and the acts of a story.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Frames the test runs.
    pub frames: u64,
    /// The budget schedule (`[[budget]]`).
    #[serde(default)]
    pub budget: Vec<BudgetKey>,
    /// The assertions (`[[expect]]`).
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// The acts (`[[act]]`), for the report's captions.
    #[serde(default)]
    pub act: Vec<Act>,
}

impl Schedule {
    /// `frames` frames at 256 MiB with no assertions: add keys with [`Schedule::budget_from`]
    /// and [`Schedule::expect`].
    pub fn new(frames: u64) -> Self {
        Self {
            frames,
            budget: Vec::new(),
            expect: Vec::new(),
            act: Vec::new(),
        }
    }

    /// The schedule with `bytes` of budget from `frame` on.
    pub fn budget_from(mut self, frame: u64, bytes: u64) -> Self {
        self.budget.push(BudgetKey {
            frame,
            bytes: bytes.into(),
        });
        self
    }

    /// The schedule with one more assertion.
    pub fn expect(mut self, expect: Expect) -> Self {
        self.expect.push(expect);
        self
    }

    /// The schedule with one more act.
    pub fn act(mut self, frame: u64, title: &str) -> Self {
        self.act.push(Act {
            frame,
            title: title.to_owned(),
        });
        self
    }

    /// Refuses what a run could not honour: no frames, a size that does not parse, a budget of
    /// 0, an assertion at a frame the run does not have, a minimum scale above a maximum, a
    /// scale outside (0, 1]. (A budget key or an act past the last frame never applies.)
    pub fn validate(&self) -> Result<()> {
        let invalid = |message: String| Error::Validation {
            context: "budget test schedule".into(),
            message,
        };
        if self.frames == 0 {
            return Err(invalid("frames must be at least 1".into()));
        }
        for k in &self.budget {
            let bytes = k.bytes.bytes()?;
            if bytes == 0 {
                return Err(invalid(format!("the budget at frame {} is 0", k.frame)));
            }
        }
        for e in &self.expect {
            if e.frame >= self.frames {
                return Err(invalid(format!(
                    "an expect at frame {} is past the last frame {}",
                    e.frame,
                    self.frames - 1
                )));
            }
            for s in [e.min_render_scale, e.max_render_scale]
                .into_iter()
                .flatten()
            {
                if !(s.is_finite() && s > 0.0 && s <= 1.0) {
                    return Err(invalid(format!(
                        "expect at frame {}: a render scale of {s} is not in (0, 1]",
                        e.frame
                    )));
                }
            }
            if let (Some(lo), Some(hi)) = (e.min_render_scale, e.max_render_scale)
                && lo > hi
            {
                return Err(invalid(format!(
                    "expect at frame {}: min_render_scale {lo} > max_render_scale {hi}",
                    e.frame
                )));
            }
            if let Some(m) = &e.max_total_bytes {
                m.bytes()?;
            }
        }
        Ok(())
    }

    /// The act in force at `frame` and its index, if any.
    pub fn act_at(&self, frame: u64) -> Option<(usize, &Act)> {
        Act::at(&self.act, frame)
    }

    /// The budget in force at `frame` (256 MiB before the first key).
    pub fn budget_at(&self, frame: u64) -> u64 {
        BudgetKey::at(&self.budget, frame)
    }

    /// The highest budget of the schedule.
    pub fn budget_max(&self) -> u64 {
        BudgetKey::max(&self.budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_the_scenario_keys_and_checks_them() {
        let json = r#"{
            "frames": 300,
            "budget": [{"frame": 0, "bytes": "256MiB"}, {"frame": 100, "bytes": 16777216}],
            "expect": [{"frame": 299, "min_render_scale": 1.0}],
            "act": [{"frame": 100, "title": "the squeeze"}]
        }"#;
        let s: Schedule = serde_json::from_str(json).unwrap();
        s.validate().unwrap();
        let mut want = Schedule::new(300)
            .budget_from(0, 256 << 20)
            .budget_from(100, 16 << 20)
            .expect(Expect {
                frame: 299,
                min_render_scale: Some(1.0),
                ..Expect::default()
            })
            .act(100, "the squeeze");
        want.budget[0].bytes = SizeValue::Text("256MiB".into());
        assert_eq!(s, want);
        assert_eq!(
            (s.budget_at(99), s.budget_at(100), s.budget_max()),
            (256 << 20, 16 << 20, 256 << 20)
        );
        assert_eq!(s.act_at(99), None);
        assert_eq!(
            s.act_at(250).map(|(i, a)| (i, a.title.as_str())),
            Some((0, "the squeeze"))
        );
        // Unknown keys and impossible assertions are refused.
        assert!(serde_json::from_str::<Schedule>(r#"{"frames": 3, "budgets": []}"#).is_err());
        let late = Schedule::new(10).expect(Expect {
            frame: 10,
            ..Expect::default()
        });
        assert!(
            late.validate()
                .unwrap_err()
                .to_string()
                .contains("past the last frame")
        );
        let crossed = Schedule::new(10).expect(Expect {
            frame: 5,
            min_render_scale: Some(0.9),
            max_render_scale: Some(0.5),
            ..Expect::default()
        });
        assert!(crossed.validate().is_err());
        assert!(Schedule::new(0).validate().is_err());
        assert!(Schedule::new(5).budget_from(1, 0).validate().is_err());
    }
}
