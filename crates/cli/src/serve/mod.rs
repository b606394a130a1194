//! `flashlab serve`'s network side: the NBD protocol ([`nbd`]) and the listening server
//! ([`listen`]). Neither knows the simulator: a device consumes [`nbd::Job`]s and answers
//! them through their [`nbd::Reply`].

pub mod listen;
pub mod nbd;
