//! The report of a sweep (filled in below).
