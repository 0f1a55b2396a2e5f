//! Random keys that name one run for good (a tracker's idempotency key, for example): unique
//! even when the state database is lost and the same brief is run again, so they come from a
//! random number generator, never from the clock or the content.

/// A new random key: 16 lowercase hexadecimal digits (64 bits from `fastrand`, whose generator
/// is seeded per thread from the operating system's randomness through `std`).
pub fn random_key() -> String {
    format!("{:016x}", fastrand::u64(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_16_hex_digits_and_differ() {
        let keys: Vec<String> = (0..64).map(|_| random_key()).collect();
        for key in &keys {
            assert_eq!(key.len(), 16, "{key}");
            assert!(
                key.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
        }
        let mut unique = keys.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "a key repeated: {keys:?}");
    }

    #[test]
    fn keys_differ_between_threads_started_at_once() {
        let handles: Vec<_> = (0..8).map(|_| std::thread::spawn(random_key)).collect();
        let mut keys: Vec<String> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 8);
    }
}
