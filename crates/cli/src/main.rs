fn main() {
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`flashlab presets | head -1`) instead of failing on every write.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(flashlab_cli::run(std::env::args().collect()));
}
