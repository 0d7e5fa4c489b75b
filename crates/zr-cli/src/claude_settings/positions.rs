//! Where each value of a JSON text that parsed is written: its line and
//! column by JSON pointer (`/permissions/allow/2`), so that a mistake
//! found after parsing (a rule that does not parse, a value of the wrong
//! kind) is reported at its place, as serde_json reports syntax errors.

use std::collections::BTreeMap;

/// Line and column (1-based) of every member and element of a JSON text:
/// a member at its key, an element at its first character.
#[derive(Debug, Default)]
pub(crate) struct Positions(BTreeMap<String, (usize, usize)>);

impl Positions {
    /// The positions of `text`, which must be JSON that parsed (on
    /// anything else, what was found until then).
    pub(crate) fn of(text: &str) -> Self {
        let mut scan = Scan {
            text,
            bytes: text.as_bytes(),
            at: 0,
            found: BTreeMap::new(),
        };
        scan.value(String::new());
        Self(scan.found)
    }

    /// The line and column of `pointer`; of its nearest parent that is
    /// written when it is not (a missing key is reported at its object).
    pub(crate) fn at(&self, pointer: &str) -> (usize, usize) {
        let mut pointer = pointer;
        loop {
            if let Some(found) = self.0.get(pointer) {
                return *found;
            }
            match pointer.rsplit_once('/') {
                Some((parent, _)) => pointer = parent,
                None => return (0, 0),
            }
        }
    }
}

/// `key` as one step of a JSON pointer (`~` and `/` escaped).
pub(crate) fn step(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    found: BTreeMap<String, (usize, usize)>,
}

impl Scan<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.at += 1;
        }
    }

    fn mark(&mut self, pointer: &str) {
        let here = crate::config::line_column(self.text, self.at);
        self.found.entry(pointer.to_owned()).or_insert(here);
    }

    fn value(&mut self, pointer: String) {
        self.skip_space();
        self.mark(&pointer);
        match self.bytes.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                loop {
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b'}') | None => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(b'"') => {
                            let start = self.at;
                            self.string();
                            let key: String = serde_json::from_str(&self.text[start..self.at])
                                .unwrap_or_default();
                            let member = format!("{pointer}/{}", step(&key));
                            let saved = self.at;
                            self.at = start;
                            self.mark(&member);
                            self.at = saved;
                            self.skip_space();
                            if self.bytes.get(self.at) == Some(&b':') {
                                self.at += 1;
                            }
                            self.value(member);
                        }
                        Some(_) => return,
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut index = 0;
                loop {
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b']') | None => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => {
                            self.value(format!("{pointer}/{index}"));
                            index += 1;
                        }
                    }
                }
            }
            Some(b'"') => self.string(),
            Some(_) => {
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
            }
            None => {}
        }
    }

    /// Past the string starting at `self.at` (its opening quote).
    fn string(&mut self) {
        self.at += 1;
        while let Some(b) = self.bytes.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => return,
                _ => {}
            }
        }
    }
}
