//! The host link: each direction is a FIFO resource with a bandwidth; a half-duplex link
//! (UART-style shared wire, SATA) uses one resource for both directions.
//!
//! What crosses it per request: a command message down (`host.command_bytes` plus
//! `host.command_overhead_ns`), write data down and read data up when `host.data_over_link`,
//! and a completion message up (`host.completion_bytes`, none when 0).

use crate::config::HostConfig;

/// Direction of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to device (command messages, write data).
    Down,
    /// Device to host (read data, completion messages).
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

    /// Sends the command message of a request down, starting no earlier than `now`; returns
    /// when the device has it.
    pub fn command(&mut self, now: u64) -> u64 {
        let bytes = u64::from(self.config.command_bytes);
        self.transfer(Dir::Down, now, bytes, self.config.command_overhead_ns)
    }

    /// Sends the completion message of a finished request up, starting no earlier than `now`;
    /// returns when the host has it, or `None` when the link has no completion message.
    pub fn completion(&mut self, now: u64) -> Option<u64> {
        let bytes = u64::from(self.config.completion_bytes);
        (bytes > 0).then(|| self.transfer(Dir::Up, now, bytes, 0))
    }

    /// Whether read and write data cross the link.
    pub fn data_over_link(&self) -> bool {
        self.config.data_over_link
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
    fn command_and_completion_messages_take_their_bytes() {
        let mut l = Link::new(HostConfig {
            link_mb_per_s: 1.0,
            command_overhead_ns: 500,
            command_bytes: 16,
            completion_bytes: 8,
            ..HostConfig::default()
        });
        assert_eq!(l.command(0), 16_500);
        assert_eq!(l.command(0), 33_000);
        assert_eq!(l.completion(10_000), Some(18_000));
        assert_eq!(l.busy_ns(), (33_000, 8_000));
        let mut none = Link::new(HostConfig::default());
        assert_eq!(none.completion(7), None);
        assert_eq!(none.command(7), 7);
        assert_eq!(none.busy_ns(), (0, 0));
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
