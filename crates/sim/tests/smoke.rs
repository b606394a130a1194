use flashlab_sim::{run_experiment, ExperimentConfig};

#[test]
fn smoke_timed_and_verified() {
    for extra in [&["run.functional_only=true"][..], &[][..]] {
        let mut sets = vec![
            "geometry.blocks_per_plane=16",
            "ftl.over_provisioning=0.25",
            "workload.count=20000",
            "run.precondition=1.0",
            "run.verify=true",
            "run.precondition_max_passes=2",
        ];
        sets.extend_from_slice(extra);
        let cfg = ExperimentConfig::with_sets("default", &sets).unwrap();
        let t = std::time::Instant::now();
        let r = run_experiment(&cfg, &mut |_| {}).unwrap();
        eprintln!(
            "{:?} {}",
            t.elapsed(),
            flashlab_sim::stats::render_table(&r)
        );
        assert_eq!(r.host.all.count, 20000);
    }
}
