//! What a request compiles from text it carries, compiled once: a CRD schema's `pattern`s and a
//! webhook's `matchConditions` come with every write, and compiling them again each time was a
//! tenth of the sim's CPU under the edit-sequence check. Each caller keeps a [`Memo`] per
//! thread (no lock on the request path); a memo holds at most [`Memo::LIMIT`] entries and
//! starts over when full, so texts from hostile CRDs cannot grow it without bound.

use std::collections::HashMap;

/// Compiled values by their source text.
pub struct Memo<V> {
    compiled: HashMap<String, V>,
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Self {
            compiled: HashMap::new(),
        }
    }
}

impl<V> Memo<V> {
    /// Entries kept before the memo starts over.
    pub const LIMIT: usize = 512;

    /// Calls `using` with what `compile` makes of `text`, compiling it only the first time.
    pub fn with<R>(
        &mut self,
        text: &str,
        compile: impl FnOnce(&str) -> V,
        using: impl FnOnce(&V) -> R,
    ) -> R {
        if let Some(compiled) = self.compiled.get(text) {
            return using(compiled);
        }
        if self.compiled.len() >= Self::LIMIT {
            self.compiled.clear();
        }
        using(
            self.compiled
                .entry(text.to_string())
                .or_insert(compile(text)),
        )
    }

    /// How many texts are held.
    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text is compiled once however often it is used, and the memo never holds more than
    /// its limit.
    #[test]
    fn compiles_each_text_once_and_stays_bounded() {
        let mut memo = Memo::default();
        let mut compiled = 0;
        for _ in 0..3 {
            let length = memo.with(
                "^[a-z]+$",
                |t| {
                    compiled += 1;
                    t.len()
                },
                |n| *n,
            );
            assert_eq!(length, 8);
        }
        assert_eq!(compiled, 1);
        for i in 0..Memo::<usize>::LIMIT + 10 {
            memo.with(&format!("p{i}"), |t| t.len(), |_| ());
            assert!(memo.len() <= Memo::<usize>::LIMIT);
        }
        assert!(!memo.is_empty());
    }
}
