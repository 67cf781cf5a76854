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
