//! `flashlab serve`: the NBD protocol ([`nbd`]) and the listening server ([`listen`]), which
//! know nothing of the simulator (a device consumes [`nbd::Job`]s and answers them through
//! their [`nbd::Reply`]); the command ([`command`]) that puts a simulated SSD behind them,
//! and its live figures ([`stats`]).

pub mod command;
pub mod listen;
pub mod nbd;
pub mod stats;
