use mipflow::PlannerConfig;
use mipflow::testing::planner_fixture::BenchScene;
fn main() {
    let mut s = BenchScene::with(
        std::env::args()
            .nth(1)
            .map_or(10_000, |a| a.parse().unwrap()),
        std::env::args().nth(2).map_or(0.5, |a| a.parse().unwrap()),
        PlannerConfig::default(),
    );
    s.converge(20_000).unwrap();
    let mut sign = 1.0;
    let mut tot = std::time::Duration::ZERO;
    for _ in 0..2000 {
        sign = -sign;
        s.move_view(0.01 * sign);
        let t0 = std::time::Instant::now();
        s.plan_frame();
        tot += t0.elapsed();
    }
    println!(
        "list {} transitions {} avg {:?}",
        s.planner.last_plan_textures(),
        s.plan.transitions.len(),
        tot / 2000
    );
    println!(
        "PlanTexture {}",
        std::mem::size_of::<mipflow::low_level::PlanTexture>()
    );
}
