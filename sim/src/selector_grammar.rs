//! The label selector grammar of a list's `labelSelector`, as apimachinery's `labels.Parse`
//! reads it, with its error messages word for word (kube-apiserver answers them as a 400):
//!
//! ```text
//! selector    ::= requirement | requirement "," selector
//! requirement ::= ["!"] KEY [ ("in" | "notin") "(" values ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
//! ```
//!
//! A lexer splits the text into identifiers and operators (`=`, `==`, `!=`, `!`, `(`, `)`, `,`,
//! `>`, `<`, greedily), `in` and `notin` are keywords only where an operator stands, and every
//! key and value is validated as a label key and label value.

/// One requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    /// `key>n`: the label is there and an integer above `n`.
    GreaterThan(String, i64),
    /// `key<n`: the label is there and an integer below `n`.
    LessThan(String, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Identifier(String),
    In,
    NotIn,
    /// `!`
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    OpenPar,
    ClosedPar,
    Comma,
    End,
    /// What the lexer could not read, already worded.
    Error(String),
}

impl Token {
    /// The text the parser's messages quote for the token.
    fn literal(&self) -> &str {
        match self {
            Token::Identifier(text) | Token::Error(text) => text,
            Token::In => "in",
            Token::NotIn => "notin",
            Token::DoesNotExist => "!",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::GreaterThan => ">",
            Token::LessThan => "<",
            Token::OpenPar => "(",
            Token::ClosedPar => ")",
            Token::Comma => ",",
            Token::End => "",
        }
    }

    /// As the parser reads it where values stand: `in` and `notin` are identifiers there.
    fn as_value(&self) -> Token {
        match self {
            Token::In | Token::NotIn => Token::Identifier(self.literal().to_string()),
            other => other.clone(),
        }
    }
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn operator(text: &[u8]) -> Option<Token> {
    Some(match text {
        b"!" => Token::DoesNotExist,
        b"!=" => Token::NotEquals,
        b"(" => Token::OpenPar,
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"<" => Token::LessThan,
        _ => return None,
    })
}

/// The tokens of `text`, ending with [`Token::End`].
fn lex(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut tokens = Vec::new();
    loop {
        while at < bytes.len() && is_space(bytes[at]) {
            at += 1;
        }
        if at >= bytes.len() {
            tokens.push(Token::End);
            return tokens;
        }
        if is_special(bytes[at]) {
            // The longest run of special characters that is still an operator.
            let start = at;
            let mut longest: Option<(Token, usize)> = None;
            while at < bytes.len() && is_special(bytes[at]) {
                at += 1;
                match operator(&bytes[start..at]) {
                    Some(token) => longest = Some((token, at)),
                    None if longest.is_some() => break,
                    None => {}
                }
            }
            match longest {
                Some((token, end)) => {
                    tokens.push(token);
                    at = end;
                }
                None => tokens.push(Token::Error(format!(
                    "error expected: keyword found '{}'",
                    &text[start..at]
                ))),
            }
        } else {
            let start = at;
            while at < bytes.len() && !is_special(bytes[at]) && !is_space(bytes[at]) {
                at += 1;
            }
            tokens.push(match &text[start..at] {
                "in" => Token::In,
                "notin" => Token::NotIn,
                word => Token::Identifier(word.to_string()),
            });
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Token {
        self.tokens[self.at.min(self.tokens.len() - 1)].as_value()
    }

    /// The next token; `as_value` reads `in`/`notin` as identifiers.
    fn next(&mut self, as_value: bool) -> Token {
        let token = self.tokens[self.at.min(self.tokens.len() - 1)].clone();
        self.at += 1;
        if as_value { token.as_value() } else { token }
    }

    fn selector(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.peek() {
                Token::Identifier(_) | Token::DoesNotExist => {
                    let requirement = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(requirement);
                    match self.next(true) {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let after = self.peek();
                            if !matches!(after, Token::Identifier(_) | Token::DoesNotExist) {
                                return Err(format!(
                                    "found '{}', expected: identifier after ','",
                                    after.literal()
                                ));
                            }
                        }
                        other => {
                            return Err(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                other.literal()
                            ));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                other => {
                    return Err(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        other.literal()
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut token = self.next(true);
        let absent = token == Token::DoesNotExist;
        if absent {
            token = self.next(true);
        }
        let Token::Identifier(key) = token else {
            return Err(format!("found '{}', expected: identifier", token.literal()));
        };
        let key_errors = crate::validation::label_key_errors(&key);
        if !key_errors.is_empty() {
            // The parser validates with no field path: Go prints it `<nil>`.
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                crate::errors::go_quote(&key),
                key_errors.join("; ")
            ));
        }
        if matches!(self.peek(), Token::End | Token::Comma) {
            return Ok(if absent {
                Requirement::DoesNotExist(key)
            } else {
                Requirement::Exists(key)
            });
        }
        let operator = self.next(false);
        let values = match operator {
            Token::In | Token::NotIn => self.values()?,
            Token::Equals
            | Token::DoubleEquals
            | Token::NotEquals
            | Token::GreaterThan
            | Token::LessThan => vec![self.exact_value()?],
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.literal()
                ));
            }
        };
        checked(key, operator, values)
    }

    fn values(&mut self) -> Result<Vec<String>, String> {
        let open = self.next(true);
        if open != Token::OpenPar {
            return Err(format!("found '{}' expected: '('", open.literal()));
        }
        match self.peek() {
            Token::Identifier(_) | Token::Comma => {
                let values = self.identifiers()?;
                let close = self.next(true);
                if close != Token::ClosedPar {
                    return Err(format!("found '{}', expected: ')'", close.literal()));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.next(true);
                Ok(vec![String::new()])
            }
            other => Err(format!(
                "found '{}', expected: ',', ')' or identifier",
                other.literal()
            )),
        }
    }

    /// A comma-separated list, each item possibly empty; a set, sorted.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            match self.next(true) {
                Token::Identifier(value) => {
                    set.insert(value);
                    match self.peek() {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        other => {
                            return Err(format!(
                                "found '{}', expected: ',' or ')'",
                                other.literal()
                            ));
                        }
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    match self.peek() {
                        Token::ClosedPar => {
                            set.insert(String::new());
                            return Ok(set.into_iter().collect());
                        }
                        Token::Comma => {
                            set.insert(String::new());
                        }
                        _ => {}
                    }
                }
                other => {
                    return Err(format!(
                        "found '{}', expected: ',', or identifier",
                        other.literal()
                    ));
                }
            }
        }
    }

    fn exact_value(&mut self) -> Result<String, String> {
        if matches!(self.peek(), Token::End | Token::Comma) {
            return Ok(String::new());
        }
        match self.next(true) {
            Token::Identifier(value) => Ok(value),
            other => Err(format!("found '{}', expected: identifier", other.literal())),
        }
    }
}

/// A requirement validated as apimachinery's `NewRequirement` validates it: each value a label
/// value (`values[i][key]`), `>` and `<` an integer.
fn checked(key: String, operator: Token, values: Vec<String>) -> Result<Requirement, String> {
    let mut errors = Vec::new();
    if matches!(operator, Token::GreaterThan | Token::LessThan) {
        for (i, value) in values.iter().enumerate() {
            if value.parse::<i64>().is_err() {
                errors.push(format!(
                    "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                    crate::errors::go_quote(value)
                ));
            }
        }
    }
    for (i, value) in values.iter().enumerate() {
        let value_errors = crate::validation::label_value_errors(value);
        if !value_errors.is_empty() {
            errors.push(format!(
                "values[{i}][{key}]: Invalid value: {}: {}",
                crate::errors::go_quote(value),
                value_errors.join("; ")
            ));
        }
    }
    match errors.len() {
        0 => {}
        1 => return Err(errors.remove(0)),
        _ => return Err(format!("[{}]", errors.join(", "))),
    }
    let first = || values.first().cloned().unwrap_or_default();
    let number = || first().parse::<i64>().unwrap_or_default();
    Ok(match operator {
        Token::In => Requirement::In(key, values),
        Token::NotIn => Requirement::NotIn(key, values),
        Token::NotEquals => Requirement::NotEquals(key, first()),
        Token::GreaterThan => Requirement::GreaterThan(key, number()),
        Token::LessThan => Requirement::LessThan(key, number()),
        _ => Requirement::Equals(key, first()),
    })
}

/// Parses a `labelSelector`; the error is kube-apiserver's message for it.
pub(crate) fn parse(text: &str) -> Result<Vec<Requirement>, String> {
    Parser {
        tokens: lex(text),
        at: 0,
    }
    .selector()
}
