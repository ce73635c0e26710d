//! The budget in force: the caller's [`Budget`], lowered to what the driver really gave after it
//! ran out of memory below it, and raised again after a quiet spell.

use super::Budget;

/// The caller's budget and the out-of-memory cap that may lower it. Owned by the frame's budget
/// loop ([`crate::BudgetManager`]), so every creation that fails (a texture, a render target, a
/// game's own resource it reports) lowers one figure.
#[derive(Clone, Debug)]
pub struct EffectiveBudget {
    budget: Budget,
    /// Lowered to what the driver really gave when it reported out-of-memory.
    oom_cap: Option<u64>,
    /// The frame of the last out-of-memory error or cap raise.
    last_oom_frame: u64,
    /// Quiet frames after which the cap is raised by an eighth (0: never).
    probe_frames: u32,
}

impl EffectiveBudget {
    /// `budget`, with no cap; after an out-of-memory error the cap is raised again after
    /// `probe_frames` quiet frames (0: never).
    pub fn new(budget: Budget, probe_frames: u32) -> Self {
        Self {
            budget,
            oom_cap: None,
            last_oom_frame: 0,
            probe_frames,
        }
    }

    /// The caller's budget.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Replaces the caller's budget; a budget the caller chose replaces what an out-of-memory
    /// error inferred, so the cap is cleared.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
        self.oom_cap = None;
    }

    /// The cap the last out-of-memory errors set, if any.
    pub fn oom_cap(&self) -> Option<u64> {
        self.oom_cap
    }

    /// Forgets the cap (the caller knows memory was freed). True when there was one.
    pub fn clear_oom_cap(&mut self) -> bool {
        self.oom_cap.take().is_some()
    }

    /// `budget` lowered to the cap.
    pub fn effective(&self, budget: u64) -> u64 {
        self.oom_cap.map_or(budget, |c| c.min(budget))
    }

    /// The budget at `frame`: (the caller's figure now, the effective figure). Memory the driver
    /// lacked may come back (another application let go of it): after a quiet spell the cap is
    /// offered an eighth more (at least 1 MiB). If it is not there, the next out-of-memory lowers
    /// the cap again: at most one failed creation per spell. True in the third field when the cap
    /// moved (plans made under the old one are stale).
    pub fn at_frame(&mut self, frame: u64) -> (u64, u64, bool) {
        let budget = self.budget.current_bytes();
        let mut moved = false;
        if let Some(cap) = self.oom_cap {
            let spell = u64::from(self.probe_frames);
            if spell > 0 && frame >= self.last_oom_frame.saturating_add(spell) {
                self.last_oom_frame = frame;
                let raised = cap.saturating_add((cap / 8).max(1 << 20));
                self.oom_cap = (raised < budget).then_some(raised);
                moved = true;
                tracing::info!(cap = ?self.oom_cap, "out-of-memory cap raised after a quiet spell");
            }
        }
        (budget, self.effective(budget), moved)
    }

    /// The driver could not give what the ledger said fits: the effective budget is lowered to
    /// `ledger_total`, what the driver really gave, so the next plans stay below it.
    pub fn note_out_of_memory(&mut self, frame: u64, ledger_total: u64) {
        self.oom_cap = Some(self.oom_cap.map_or(ledger_total, |c| c.min(ledger_total)));
        self.last_oom_frame = frame;
        tracing::warn!(
            cap = ledger_total,
            "out of GPU memory: effective budget lowered to what the driver gave"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_lowers_then_rises_after_a_quiet_spell() {
        let mut b = EffectiveBudget::new(Budget::bytes(100 << 20), 10);
        assert_eq!(b.at_frame(1), (100 << 20, 100 << 20, false));
        b.note_out_of_memory(2, 40 << 20);
        b.note_out_of_memory(3, 60 << 20); // a higher figure never raises the cap
        assert_eq!(b.oom_cap(), Some(40 << 20));
        assert_eq!(b.at_frame(12).1, 40 << 20);
        let (_, eff, moved) = b.at_frame(13);
        assert!(moved);
        assert_eq!(eff, 45 << 20);
        b.set_budget(Budget::bytes(50 << 20));
        assert_eq!(b.oom_cap(), None);
    }
}
