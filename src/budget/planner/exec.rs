//! The reference executor: the contract of the module docs, run on plain numbers.

use super::{BucketCost, Plan, PlanInput, PlanTexture, PlanTextures, Transition, TransitionKind};

/// A step that breaks the executor contract (see [`Planner`](super::Planner)'s contract).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractViolation {
    /// The step would raise the total past the plan's limit (and above where it was).
    #[error(
        "{transition:?} would take the total from {total} to {after} bytes, past the limit {limit}"
    )]
    OverLimit {
        /// The step (a build of an in-flight grow is reported as its `Grow`).
        transition: Transition,
        /// Total before the step.
        total: u64,
        /// Highest total during the step.
        after: u64,
        /// The plan's limit.
        limit: u64,
    },
    /// The step does not match the state (wrong `from`, busy without a cancel, nothing in flight).
    #[error("{transition:?} does not match the state: resident {resident}, busy {busy}")]
    Stale {
        /// The step.
        transition: Transition,
        /// The texture's resident level (the current bucket for a rescale).
        resident: u8,
        /// Whether the texture was busy.
        busy: bool,
    },
    /// The step names a texture or bucket that does not exist, or a level out of range.
    #[error("{transition:?} names a texture, bucket or level that does not exist")]
    Unknown {
        /// The step.
        transition: Transition,
    },
}

/// Runs plans on plain numbers, exactly as the executor contract says, and tracks the total the
/// ledger would show: fixed bytes + render targets + every texture's resident levels.
///
/// Every allocation is checked as a real executor should check it (`total + new <= limit`, or,
/// for an eviction or a rescale, no higher than before), so a plan that would ever pass the budget
/// fails with a [`ContractViolation`] instead.
#[derive(Clone, Debug)]
pub struct SimExecutor {
    fixed: u64,
    bucket: usize,
    rt: u64,
    textures: u64,
    limit: u64,
    peak: u64,
}

impl SimExecutor {
    /// Starts from the state `input` describes (its textures' resident levels, its bucket), with
    /// the limit at `budget - headroom` until the first plan is applied.
    pub fn new(input: &PlanInput<'_>) -> Self {
        let bucket = input
            .current_bucket
            .min(input.buckets.len().saturating_sub(1));
        let rt = input.buckets.get(bucket).map_or(0, |b| b.bytes);
        let all = input.textures;
        let textures = (0..all.len()).fold(0u64, |a, i| {
            a.saturating_add(all.bytes_from(i, all[i].resident_level))
        });
        let total = input
            .fixed_bytes
            .saturating_add(rt)
            .saturating_add(textures);
        Self {
            fixed: input.fixed_bytes,
            bucket,
            rt,
            textures,
            limit: input.budget.saturating_sub(input.headroom),
            peak: total,
        }
    }

    /// The total the ledger would show now.
    pub fn total(&self) -> u64 {
        self.fixed
            .saturating_add(self.rt)
            .saturating_add(self.textures)
    }

    /// The highest total since the executor was made or [`SimExecutor::reset_peak`] was called.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Start a new peak window at the current total.
    pub fn reset_peak(&mut self) {
        self.peak = self.total();
    }

    /// The render-target bucket that exists now.
    pub fn bucket(&self) -> usize {
        self.bucket
    }

    /// The limit of the last applied plan.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Step 1 of the contract: run `plan.transitions` in order on `textures` (which must be the
    /// state the plan was made for). Cancels, evictions, shrinks and rescales happen at once;
    /// grows only mark their texture busy with `in_flight_level = to`.
    pub fn apply(
        &mut self,
        plan: &Plan,
        buckets: &[BucketCost],
        textures: &mut PlanTextures,
    ) -> Result<(), ContractViolation> {
        self.limit = plan.limit;
        for &tr in &plan.transitions {
            self.step(tr, buckets, textures)?;
        }
        Ok(())
    }

    fn step(
        &mut self,
        tr: Transition,
        buckets: &[BucketCost],
        textures: &mut PlanTextures,
    ) -> Result<(), ContractViolation> {
        let unknown = ContractViolation::Unknown { transition: tr };
        let before = self.total();
        if tr.kind == TransitionKind::Rescale {
            let new = buckets.get(usize::from(tr.to)).ok_or(unknown)?.bytes;
            if usize::from(tr.from) != self.bucket {
                return Err(ContractViolation::Stale {
                    transition: tr,
                    resident: self.bucket as u8,
                    busy: false,
                });
            }
            // The old targets are destroyed first, so only the result counts.
            let after = before.saturating_sub(self.rt).saturating_add(new);
            if after > before && after > self.limit {
                return Err(self.over(tr, before, after));
            }
            self.rt = new;
            self.bucket = usize::from(tr.to);
            self.peak = self.peak.max(after);
            return Ok(());
        }
        let i = tr.texture as usize;
        let Some(&t) = textures.get(i) else {
            return Err(unknown);
        };
        let count = t.level_count.min(super::MAX_LEVELS as u8);
        let stale = ContractViolation::Stale {
            transition: tr,
            resident: t.resident_level,
            busy: t.busy,
        };
        if tr.to > count {
            return Err(unknown);
        }
        // A texture can only start at an allowed base level (the floor and "nothing" aside).
        let base_ok = |t: &PlanTexture, l: u8| {
            l >= count || l == t.floor_level.min(count) || t.base_allowed(l)
        };
        if matches!(tr.kind, TransitionKind::Grow | TransitionKind::Shrink) && !base_ok(&t, tr.to) {
            return Err(unknown);
        }
        // A grow on a busy texture retargets it to a finer level; anything else on a busy
        // texture needs a cancel first.
        let retarget = tr.kind == TransitionKind::Grow && t.busy && tr.to < t.in_flight_level;
        if tr.from != t.resident_level
            || (t.busy != (tr.kind == TransitionKind::Cancel) && !retarget)
        {
            return Err(stale);
        }
        let old = textures.bytes_from(i, tr.from);
        let new = textures.bytes_from(i, tr.to);
        let t = &mut textures[i];
        match tr.kind {
            TransitionKind::Cancel => {
                t.busy = false;
                return Ok(());
            }
            TransitionKind::Grow => {
                if tr.to >= tr.from {
                    return Err(stale);
                }
                t.busy = true;
                t.in_flight_level = tr.to;
                return Ok(());
            }
            TransitionKind::Evict => {
                if tr.to != t.floor_level.min(count) && tr.to != count {
                    return Err(stale);
                }
                // Destroyed first, then the floor is recreated from CPU data.
                let after = before.saturating_sub(old).saturating_add(new);
                if after > before && after > self.limit {
                    return Err(self.over(tr, before, after));
                }
            }
            TransitionKind::Shrink | TransitionKind::Rescale => {
                if tr.to <= tr.from {
                    return Err(stale);
                }
                // The new texture is created while the old one is alive.
                let during = before.saturating_add(new);
                if during > self.limit {
                    return Err(self.over(tr, before, during));
                }
                self.peak = self.peak.max(during);
            }
        }
        self.textures = self.textures.saturating_sub(old).saturating_add(new);
        t.resident_level = tr.to;
        self.peak = self.peak.max(self.total());
        Ok(())
    }

    /// Step 2 of the contract: build the in-flight grow of `texture` (its data arrived): the new
    /// texture is created while the old one is alive, then the old one is destroyed.
    pub fn build(
        &mut self,
        texture: u32,
        textures: &mut PlanTextures,
    ) -> Result<(), ContractViolation> {
        let i = texture as usize;
        let Some(&t) = textures.get(i) else {
            return Err(ContractViolation::Unknown {
                transition: Transition {
                    texture,
                    from: 0,
                    to: 0,
                    kind: TransitionKind::Grow,
                },
            });
        };
        let tr = Transition {
            texture,
            from: t.resident_level,
            to: t.in_flight_level,
            kind: TransitionKind::Grow,
        };
        if !t.busy {
            return Err(ContractViolation::Stale {
                transition: tr,
                resident: t.resident_level,
                busy: false,
            });
        }
        let old = textures.bytes_from(i, t.resident_level);
        let new = textures.bytes_from(i, t.in_flight_level);
        let before = self.total();
        let during = before.saturating_add(new);
        if during > self.limit {
            return Err(self.over(tr, before, during));
        }
        self.peak = self.peak.max(during);
        self.textures = self.textures.saturating_sub(old).saturating_add(new);
        let t = &mut textures[i];
        t.resident_level = t.in_flight_level;
        t.busy = false;
        Ok(())
    }

    /// An in-flight grow failed (IO error, corrupt level): the texture keeps what it had.
    pub fn abandon(&mut self, texture: u32, textures: &mut PlanTextures) {
        if let Some(t) = textures.get_mut(texture as usize) {
            t.busy = false;
        }
    }

    fn over(&self, transition: Transition, total: u64, after: u64) -> ContractViolation {
        ContractViolation::OverLimit {
            transition,
            total,
            after,
            limit: self.limit,
        }
    }
}
