//! The VRAM account: [`ledger`] (what is on the GPU, per [`Category`]), [`size`] (exact byte math),
//! [`source`] (where the budget figure comes from) and [`planner`] (how the budget is spent).

pub mod effective;
pub mod ledger;
pub mod planner;
pub mod size;
pub mod source;

pub use effective::EffectiveBudget;
pub use ledger::{
    ByCategory, Category, CategoryStats, Charge, Ledger, LedgerSnapshot, LiveAllocation,
};
pub use source::{AdapterMemory, Budget, BudgetSource, format_bytes, parse_size};
