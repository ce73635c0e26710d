//! Planner time per frame at 1k and 10k textures (issue 4; goal: at most 50 µs at 10k in a
//! steady view).
//!
//! The scene (`mipflow::testing::planner_fixture`, shared with `mipflow bench`) is random BC7
//! textures of 16² to 8192², about half of them in view, a budget of
//! about half the demand and nine render-scale buckets. It is first run to convergence (plans
//! executed through `SimExecutor`, grows built at once) and past every hold. Then:
//! - `steady`: the view does not change; each frame costs the change check of every texture.
//! - `moving`: every visible texture's wanted level moves by 0.01 each frame (a slow dolly), so
//!   every frame is planned again from scratch.
//!
//! `cargo bench --bench planner`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mipflow::testing::planner_fixture::BenchScene;

fn planner(c: &mut Criterion) {
    let mut group = c.benchmark_group("planner");
    for n in [1_000, 10_000] {
        let mut scene = BenchScene::new(n);
        scene.converge(20_000).expect("the scene converges");
        assert!(!scene.plan_frame(), "converged scene re-planned");
        group.bench_function(BenchmarkId::new("steady", n), |b| {
            b.iter(|| black_box(scene.plan_frame()))
        });
        let mut sign = 1.0;
        group.bench_function(BenchmarkId::new("moving", n), |b| {
            b.iter(|| {
                sign = -sign;
                scene.move_view(0.01 * sign);
                black_box(scene.plan_frame())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, planner);
criterion_main!(benches);
