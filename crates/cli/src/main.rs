fn main() {
    std::process::exit(flashlab_cli::run(std::env::args().collect()));
}
