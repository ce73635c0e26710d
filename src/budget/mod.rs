//! The VRAM account: [`ledger`] (what is on the GPU, per [`Category`]), [`size`] (exact byte math),
//! [`source`] (where the budget figure comes from) and [`planner`] (how the budget is spent).

pub mod effective;
pub mod ledger;
pub mod planner;
pub mod size;
pub mod source;

pub use effective::EffectiveBudget;
pub use ledger::{Category, CategoryStats, Charge, Ledger, LedgerSnapshot};
pub use source::{Budget, BudgetSource, parse_size};
