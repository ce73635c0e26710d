//! Demand from bounds per object: [`DemandView::sphere`] over 10k spheres on a grid in front of
//! the camera (the layout of `benches/manager.rs`), 1280x720, with a guard band of 2x:
//! - `steady`: a camera that stood still (no look-ahead, no predicted views);
//! - `moving`: a camera strafing 0.05 units a frame, so the look-ahead and the two predicted
//!   views of [`DemandView::with_look_ahead`] are tested and priced for every object.
//!
//! `cargo bench --bench demand`. Criterion's throughput is objects per second; the time per
//! object is the figure BENCHMARKS.md gives.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use mipflow::{Camera, DemandView};

const OUTPUT: (u32, u32) = (1280, 720);
const COUNT: usize = 10_000;

fn demand(c: &mut Criterion) {
    let side = (COUNT as f32).sqrt().ceil() as usize;
    let centers: Vec<Vec3> = (0..COUNT)
        .map(|i| {
            let (x, y) = ((i % side) as f32, (i / side) as f32);
            Vec3::new(
                x * 1.2 - side as f32 * 0.6,
                y * 1.2 - side as f32 * 0.6,
                0.0,
            )
        })
        .collect();
    let distance = side as f32 * 0.9;
    let camera =
        |shift: f32| Camera::look_at(Vec3::new(shift, 0.0, distance), Vec3::new(shift, 0.0, 0.0));
    let (now, prev) = (camera(0.05), camera(0.0));
    let steady = DemandView::new(&now, OUTPUT).with_guard_band(2.0);
    let moving = steady.with_look_ahead(prev.view);
    assert_eq!(moving.predicted_frames(), 2, "the moving view predicts");
    let mut group = c.benchmark_group("demand");
    group.throughput(Throughput::Elements(COUNT as u64));
    for (name, view) in [("steady", steady), ("moving", moving)] {
        group.bench_function(format!("sphere/{name}/{COUNT}"), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for &c in &centers {
                    if let Some(d) = view.sphere(black_box(c), 0.7, 1.0, 256.0) {
                        n += u32::from(d.level < 4.0);
                    }
                }
                black_box(n)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, demand);
criterion_main!(benches);
