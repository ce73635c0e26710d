//! Planner time per frame, incremental (the default) against a full pass over every texture
//! (`PlannerConfig::incremental = false`: every texture every plan) in the same run.
//!
//! The scene (`mipflow::testing::planner_fixture`, shared with `mipflow bench`) is random BC7
//! textures of 16² to 8192², a share of them in view (half; or 5%, an open world that has
//! registered far more than it sees), a budget of about half the demand and nine render-scale
//! buckets. It is first run to convergence (plans executed through `SimExecutor`, grows built
//! at once) and past every hold. Then:
//! - `steady`: the view does not change; each frame costs the change check of every texture.
//! - `moving`: every visible texture's wanted level moves by 0.01 each frame (a slow dolly), so
//!   every frame is planned again. Only the plan is timed (the update of the view, a pass over
//!   every texture, is not).
//!
//! - `moving-told`: the same, the planner told which textures moved
//!   (`Planner::plan_with_changes`, as the budget manager does): the change check reads those
//!   only (a list three quarters as long as the scene or longer is checked in full, as
//!   `moving`).
//!
//! Goals: moving, at most 100 µs at 10k textures and 1 ms at 100k; steady, at most
//! 20 µs at 10k. `cargo bench --bench planner`
//! (`cargo bench --bench planner -- incremental/moving/10000` for one line).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mipflow::PlannerConfig;
use mipflow::testing::planner_fixture::BenchScene;

/// One way to plan a frame of the scene (whether it was planned again).
type PlanFn = fn(&mut BenchScene) -> bool;

fn planner(c: &mut Criterion) {
    let mut group = c.benchmark_group("planner");
    group.sample_size(30);
    for (n, visible) in [(1_000, 0.5), (10_000, 0.5), (100_000, 0.5), (100_000, 0.05)] {
        for incremental in [true, false] {
            let mut config = PlannerConfig::default();
            config.incremental = incremental;
            let mut scene = BenchScene::with(n, visible, config);
            scene.converge(20_000).expect("the scene converges");
            assert!(!scene.plan_frame(), "converged scene re-planned");
            let name = |what: &str| {
                let mode = if incremental { "incremental" } else { "full" };
                let seen = if visible < 0.5 { "-5%-visible" } else { "" };
                BenchmarkId::new(format!("{mode}/{what}{seen}"), n)
            };
            group.bench_function(name("steady"), |b| b.iter(|| black_box(scene.plan_frame())));
            // Only the plan is timed, as in `mipflow bench`: the view's update (a pass over
            // every texture, the caller's work) is not the planner's time. `moving-told`: the
            // same motion, the planner told which textures moved (`Planner::plan_with_changes`,
            // as the budget manager does).
            let mut sign = 1.0;
            let modes: &[(&str, PlanFn)] = if incremental {
                &[
                    ("moving", BenchScene::plan_frame),
                    ("moving-told", BenchScene::plan_frame_with_changes),
                ]
            } else {
                &[("moving", BenchScene::plan_frame)]
            };
            for &(what, plan) in modes {
                group.bench_function(name(what), |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            sign = -sign;
                            scene.move_view(0.01 * sign);
                            let t0 = Instant::now();
                            black_box(plan(&mut scene));
                            total += t0.elapsed();
                        }
                        total
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, planner);
criterion_main!(benches);
