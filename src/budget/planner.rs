//! The budget planner: pure CPU, no wgpu types. (Being written: see issue 4.)
