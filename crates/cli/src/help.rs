//! Long help of `flashlab run`: the workload syntax and every settable field with its unit,
//! allowed range and default (generated from the same tables that validate configurations).

use flashlab_sim::config::{ExperimentConfig, FieldDoc};
use flashlab_sim::ftl::registry;
use flashlab_sim::workload::SPEC_HELP;

/// Wraps text at `width` columns.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}

fn section(out: &mut String, title: &str, docs: &[FieldDoc]) {
    out.push_str(&format!("\n{title}\n"));
    for d in docs {
        let unit = if d.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", d.unit)
        };
        let allowed = if d.allowed.is_empty() {
            String::new()
        } else {
            format!(" ({})", d.allowed)
        };
        out.push_str(&format!(
            "  {}{unit} = {}{allowed}\n      {}\n",
            d.path, d.value, d.doc
        ));
    }
}

/// The settings of one FTL with its own defaults (its own name, st-ftl's single task) on the
/// `default` device.
pub fn ftl_docs(e: &registry::FtlEntry) -> Vec<FieldDoc> {
    let name = format!("ftl.name=\"{}\"", e.name);
    let config = ExperimentConfig::with_sets("default", &[name.as_str()])
        .unwrap_or_else(|_| ExperimentConfig::default());
    (e.field_docs)(&config)
}

/// The text after the options of `flashlab run --help`.
pub fn run_long_help() -> String {
    let c = ExperimentConfig::default();
    let mut out = String::new();
    out.push_str(SPEC_HELP);
    out.push_str(
        "\n\nSETTINGS (--set KEY=VALUE, or the same keys in a --config TOML file under [section]).\n\
         Layering: the preset, then the file, then --set in order. Shown: unit, default (the\n\
         `default` preset), allowed values.\n",
    );
    section(&mut out, "Device geometry:", &c.geometry.field_docs());
    section(&mut out, "NAND programming rules:", &c.nand.field_docs());
    section(&mut out, "NAND timing:", &c.timing.field_docs());
    section(&mut out, "Host interface:", &c.host.field_docs());
    section(&mut out, "FTL CPU:", &c.cpu.field_docs());
    for e in registry::entries() {
        section(
            &mut out,
            &format!("FTL `{}` ([ftl] with name = \"{}\"):", e.name, e.name),
            &ftl_docs(e),
        );
    }
    section(
        &mut out,
        "Workload ([workload]; --workload sets them all):",
        &c.workload.field_docs(),
    );
    section(
        &mut out,
        "Periodic tasks ([[workload.tasks]] tables of the periodic workload; --workload periodic:tasks=... sets them):",
        &flashlab_sim::workload::PeriodicTask::default().field_docs(),
    );
    section(
        &mut out,
        "Trace replay ([trace]; --trace FILE replaces the workload; formats: `flashlab trace formats`):",
        &c.trace.field_docs(),
    );
    section(&mut out, "Run:", &c.run.field_docs());
    out.push_str(
        "\nEXAMPLES:\n  flashlab run\n  flashlab run --device cosmos --ftl pagemap --workload randwrite:bs=4k,qd=32,count=1e6 \\\n      --precondition 1.0 --json out.json\n  flashlab run --trace tpcc.trace --trace-format disksim-ns --set trace.replay=closed --set trace.queue_depth=512\n  flashlab run --set timing.die_queue_policy=read-first --set ftl.gc_victim=cost-benefit\n  flashlab run --device cosmos --workload periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s \\\n      --set timing.die_queue_policy=edf --timeseries-interval 100ms --timeseries-csv ts.csv\n\
         \nEXIT CODES: 0 success, 2 bad input, 70 internal error (FTL or simulator bug), 74 output not written.\n",
    );
    out
}
