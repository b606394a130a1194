//! The host link: each direction is a FIFO resource with a bandwidth; a half-duplex link
//! (UART-style shared wire, SATA) uses one resource for both directions.

use crate::config::HostConfig;

/// Direction of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to device (commands, write data).
    Down,
    /// Device to host (read data).
    Up,
}

/// Host link state.
#[derive(Debug, Clone)]
pub struct Link {
    config: HostConfig,
    free_at: [u64; 2],
    busy_ns: [u64; 2],
}

impl Link {
    pub fn new(config: HostConfig) -> Self {
        Link {
            config,
            free_at: [0; 2],
            busy_ns: [0; 2],
        }
    }

    fn lane(&self, dir: Dir) -> usize {
        match (dir, self.config.full_duplex) {
            (Dir::Up, true) => 1,
            _ => 0,
        }
    }

    /// Reserves the link for `bytes` (plus `extra_ns`) starting no earlier than `now`;
    /// returns when the transfer ends.
    pub fn transfer(&mut self, dir: Dir, now: u64, bytes: u64, extra_ns: u64) -> u64 {
        let lane = self.lane(dir);
        let ns = self.config.link_ns(bytes) + extra_ns;
        let start = now.max(self.free_at[lane]);
        self.free_at[lane] = start + ns;
        self.busy_ns[lane] += ns;
        start + ns
    }

    /// Time the command of a request takes on the link.
    pub fn command_ns(&self) -> u64 {
        self.config.command_overhead_ns
    }

    /// Busy time of (down, up) since the last reset; equal when half duplex.
    pub fn busy_ns(&self) -> (u64, u64) {
        if self.config.full_duplex {
            (self.busy_ns[0], self.busy_ns[1])
        } else {
            (self.busy_ns[0], self.busy_ns[0])
        }
    }

    pub fn reset_counters(&mut self) {
        self.busy_ns = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_queue_per_direction() {
        let mut l = Link::new(HostConfig {
            link_mb_per_s: 1000.0,
            ..HostConfig::default()
        });
        assert_eq!(l.transfer(Dir::Down, 0, 1000, 0), 1000);
        assert_eq!(l.transfer(Dir::Down, 0, 1000, 0), 2000);
        assert_eq!(l.transfer(Dir::Up, 0, 1000, 0), 1000);
    }

    #[test]
    fn half_duplex_shares_one_lane() {
        let mut l = Link::new(HostConfig {
            link_mb_per_s: 1000.0,
            full_duplex: false,
            ..HostConfig::default()
        });
        l.transfer(Dir::Down, 0, 1000, 0);
        assert_eq!(l.transfer(Dir::Up, 0, 1000, 0), 2000);
    }
}
