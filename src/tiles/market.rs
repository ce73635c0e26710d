//! A tile cache's size, traded against the textures' levels in the one currency
//! ([`VirtualTextures::fit_to`]: what the reference `Renderer` calls before each frame, and what
//! a game with its own renderer calls the same way).
//!
//! The texture planner says what a byte is worth to the textures ([`crate::low_level::Plan::memory_price`]:
//! pixel-octaves per byte of the best mip step it left out); the tile planner says what more
//! slots would buy and what the last ones hold ([`crate::VirtualTextures::tile_worth`], in the
//! same pixel-octaves). The cache doubles when the tiles its new slots would hold are worth
//! more per byte than the textures' price (times the keep bonus: a trade must be clearly worth
//! it), and halves when its last half holds less than the price (divided by it); between the
//! two it stays. A grow needs the new atlas beside the old one a moment: when the budget has not
//! the room, the textures are asked for it ([`crate::BudgetManager::make_room`]) and give it up
//! over the next frames, drops first, so no frame passes the budget. After a change the size
//! holds a while, so that the feedback and both plans follow it before it is judged again.

use super::VirtualTextures;
use crate::Result;
use crate::manager::BudgetManager;

/// The slots the `Renderer`'s cache starts with (fewer when its textures cannot use them), and
/// the fewest a trade halves a cache to.
pub(crate) const START_SLOTS: u32 = 64;

/// Frames the size holds after a change, for the feedback (1-3 frames late), the tiles and the
/// textures' plans to follow it.
const HOLD_FRAMES: u32 = 30;

/// Frames between two judgements while the size stays: each prices the slots with two
/// partitions of the tiles with demand, not a per-frame cost to pay for a size that moves
/// seldom.
const JUDGE_FRAMES: u32 = 8;

/// Frames a grow waits for the textures to make its room before it is given up (and held).
const ROOM_FRAMES: u32 = 120;

/// How much more a trade must be worth than what it gives up: the planners' keep bonus.
const BONUS: f64 = 1.25;

/// The cache's side of the trade, kept between frames.
#[derive(Debug, Default)]
pub(crate) struct Market {
    /// Frames left before the size is judged again.
    hold: u32,
    /// A grow to this many slots waits for its room, asked of the textures this many frames.
    waiting: Option<(u32, u32)>,
}

/// One frame's figures of the trade.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Figures {
    /// Slots now, and the most the budget and the textures allow (a power of two).
    pub(super) have: u32,
    pub(super) most: u32,
    /// Slots the textures' tails take (not the plan's).
    pub(super) tails: u32,
    pub(super) per_slot: u64,
    /// What a byte is worth to the textures.
    pub(super) price: f32,
    /// Pixel-octaves the tiles of `grow_to - have` more slots would save.
    pub(super) grow_worth: f32,
    /// Pixel-octaves the last `have - shrink_to(have, tails)` slots save.
    pub(super) shrink_worth: f32,
}

/// What the size should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Stay,
    Grow(u32),
    Shrink(u32),
}

/// The size a cache of `have` slots grows to (twice, at most `most`).
pub(super) fn grow_to(have: u32, most: u32) -> u32 {
    have.saturating_mul(2).min(most)
}

/// The size a cache of `have` slots shrinks to: half, not below the start size nor the tails.
pub(super) fn shrink_to(have: u32, tails: u32) -> u32 {
    (have / 2).max(tails.max(START_SLOTS)).min(have)
}

/// The trade, from one frame's figures.
pub(super) fn decide(f: &Figures) -> Step {
    if f.have > f.most {
        return Step::Shrink(f.most);
    }
    let price = f64::from(f.price.max(0.0));
    let to = grow_to(f.have, f.most);
    let per_slot = f.per_slot.max(1) as f64;
    if to > f.have {
        let bytes = f64::from(to - f.have) * per_slot;
        let worth = f64::from(f.grow_worth);
        if worth > 0.0 && worth / bytes > price * BONUS {
            return Step::Grow(to);
        }
    }
    let to = shrink_to(f.have, f.tails);
    if price > 0.0 && to < f.have {
        let bytes = f64::from(f.have - to) * per_slot;
        if f64::from(f.shrink_worth) / bytes < price / BONUS {
            return Step::Shrink(to);
        }
    }
    Step::Stay
}

impl VirtualTextures {
    /// Sizes the cache against the textures of `manager` (call it before the manager's frame,
    /// the cache made on `manager.context()`): it doubles, its tiles kept, when the tiles its
    /// new slots would hold save more blur per byte than the manager's last plan left out
    /// ([`crate::low_level::Plan::memory_price`], times the keep bonus), the textures asked to make the
    /// room first ([`BudgetManager::make_room`]), and halves when its last half saves less;
    /// after a change it holds 30 frames, and while it stays it is judged every 8. It never
    /// takes more than `most_bytes` nor a quarter of the budget, and a budget that falls below
    /// that shrinks it at once (its tiles dropped; they stream back). Nothing before the view's
    /// feedback has come back for every texture: the CPU's first guess would buy slots for
    /// tiles the view does not show. Errors: those of [`VirtualTextures::grow`] and
    /// [`VirtualTextures::resize`] (the cache is then unchanged).
    pub fn fit_to(&mut self, manager: &mut BudgetManager, most_bytes: u64) -> Result<()> {
        let budget = manager.budget().current_bytes();
        let cap = most_bytes.min(budget / 4);
        let fit = crate::VtConfig::slots_for(self.format(), self.tile_size(), cap);
        // A power of two (a budget that moves a little changes nothing), no more than the
        // textures could use, no fewer than their tails take.
        let most = (1u32 << (31 - fit.leading_zeros()))
            .min(self.max_useful_slots())
            .max(self.min_slots());
        let have = self.slots().0 as u32;
        if have > most {
            // The budget fell: at once, the tiles dropped (they stream back).
            self.market.waiting = None;
            manager.make_room(0);
            return self.resize(manager.context(), most);
        }
        if self.market.hold > 0 {
            self.market.hold -= 1;
            return Ok(());
        }
        // A grow waiting for its room: made once the budget has it, else given up in time.
        if let Some((to, frames)) = self.market.waiting {
            let need = u64::from(to) * self.bytes_per_slot();
            let room = budget.saturating_sub(manager.context().ledger().total_bytes());
            if need <= room || frames >= ROOM_FRAMES || to > most {
                self.market.waiting = None;
                self.market.hold = HOLD_FRAMES;
                manager.make_room(0);
                if need <= room && to <= most {
                    return self.grow(manager.context(), to);
                }
            } else {
                self.market.waiting = Some((to, frames + 1));
            }
            return Ok(());
        }
        if !self.all_have_feedback() {
            return Ok(());
        }
        let tails = self.min_slots();
        let free = (have - tails.min(have)) as usize;
        let to = grow_to(have, most);
        let figures = Figures {
            have,
            most,
            tails,
            per_slot: self.bytes_per_slot(),
            price: manager.last_plan().memory_price,
            grow_worth: self.tile_worth(free..free + (to - have) as usize),
            shrink_worth: self
                .tile_worth(free.saturating_sub((have - shrink_to(have, tails)) as usize)..free),
        };
        match decide(&figures) {
            Step::Stay => {
                self.market.hold = JUDGE_FRAMES;
                Ok(())
            }
            Step::Shrink(to) => {
                self.market.hold = HOLD_FRAMES;
                self.resize(manager.context(), to)
            }
            Step::Grow(to) => {
                // The new atlas beside the old one a moment.
                let need = u64::from(to) * figures.per_slot;
                let room = budget.saturating_sub(manager.context().ledger().total_bytes());
                if need <= room {
                    self.market.hold = HOLD_FRAMES;
                    self.grow(manager.context(), to)
                } else {
                    // The textures make the room over the next frames (the plans leave `need`
                    // free beyond the ledger); the grow waits for it.
                    self.market.waiting = Some((to, 0));
                    manager.make_room(need);
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(price: f32, grow_worth: f32, shrink_worth: f32) -> Figures {
        Figures {
            have: 128,
            most: 512,
            tails: 8,
            per_slot: 1000,
            price,
            grow_worth,
            shrink_worth,
        }
    }

    /// 128 more slots of 1000 bytes: a grow pays when their tiles save more than 1.25 times
    /// what 128,000 bytes save the textures; a shrink when the last 64 slots save less than
    /// 1/1.25 of what 64,000 bytes would.
    #[test]
    fn the_cache_trades_slots_against_the_textures_price() {
        // Memory to spare (no step left out): any tile wanted beyond the slots is worth them.
        assert_eq!(decide(&figures(0.0, 1.0, 0.0)), Step::Grow(256));
        assert_eq!(
            decide(&figures(0.0, 0.0, 0.0)),
            Step::Stay,
            "nothing to hold"
        );
        // Price 0.01 per byte: 128,000 bytes buy the textures 1280 pixel-octaves.
        assert_eq!(decide(&figures(0.01, 1601.0, 1e9)), Step::Grow(256));
        assert_eq!(
            decide(&figures(0.01, 1599.0, 1e9)),
            Step::Stay,
            "not clearly"
        );
        // The last 64 slots: 640 pixel-octaves buys them from the textures.
        assert_eq!(decide(&figures(0.01, 0.0, 511.0)), Step::Shrink(64));
        assert_eq!(
            decide(&figures(0.01, 0.0, 513.0)),
            Step::Stay,
            "not clearly"
        );
        // Down to the start size from between it and twice it.
        let odd = Figures {
            have: 86,
            ..figures(0.01, 0.0, 0.0)
        };
        assert_eq!(decide(&odd), Step::Shrink(64));
        // Never below the start size, nor what the tails take; above the most, at once.
        let small = Figures {
            have: 64,
            ..figures(0.01, 0.0, 0.0)
        };
        assert_eq!(decide(&small), Step::Stay);
        let over = Figures {
            most: 64,
            ..figures(0.0, 1e9, 0.0)
        };
        assert_eq!(decide(&over), Step::Shrink(64));
        let full = Figures {
            most: 128,
            ..figures(0.0, 1e9, 1e9)
        };
        assert_eq!(decide(&full), Step::Stay, "at the most");
    }
}
